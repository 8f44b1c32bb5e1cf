// The bundle's entry: tells the command how it was built and hands it the
// dashboard's files, then runs it. `rookery-dist/` is the compiled src/ (dist/
// or build/src/) and `rookery-sea:dashboard-files` the files of
// src/dashboard/static (both resolved by ./bundle.mjs). This module is
// evaluated before ./run.mjs imports the command, so both are in place
// before any flag is read.
import { isSea } from 'node:sea';
import { provideBuild } from 'rookery-dist/version.js';
import { provideDashboardFiles } from 'rookery-dist/dashboard/assets.js';
import files from 'rookery-sea:dashboard-files';

// ROOKERY_BUILD is set by the bundler for the npm package's command (scripts/command/build.mjs).
// eslint-disable-next-line no-undef
provideBuild(isSea() ? 'single executable' : typeof ROOKERY_BUILD === 'string' ? ROOKERY_BUILD : 'bundle');
provideDashboardFiles(files);
