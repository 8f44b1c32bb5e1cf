#!/usr/bin/env node
// The `rookery` command (scripts/command/build.mjs): runs ./bundle.cjs,
// compiled from V8's code cache in ./bundle.cache when this Node accepts it
// (the same version and flags that made it), else compiled as usual.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { wrap } = require('node:module');

const file = path.join(__dirname, 'bundle.cjs');
let cachedData;
try {
  cachedData = fs.readFileSync(path.join(__dirname, 'bundle.cache'));
} catch {
  // No cache (a build that made none): compiled from the source alone.
}
// ASCII by construction (build.mjs checks): latin1 makes the same string without decoding UTF-8.
const script = new vm.Script(wrap(fs.readFileSync(file, 'latin1')), {
  filename: file,
  cachedData,
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
const bundle = { exports: {}, filename: file, id: file, loaded: false, children: [], paths: module.paths };
script.runInThisContext().call(bundle.exports, bundle.exports, require, bundle, file, __dirname);
