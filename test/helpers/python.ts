/**
 * What the tests that run python/rookery.py under pytest share: the Python
 * to run, where the module is, the command a wrapper script starts, and the
 * skip reason when pytest is missing (never under CI, where .ci/run
 * installs it).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
export const PYTHON_DIR = fileURLToPath(new URL('../../../python/', import.meta.url));
export const PYTHON = process.env.PYTHON ?? 'python3';
const hasPytest = spawnSync(PYTHON, ['-c', 'import pytest']).status === 0;
export const skipWithoutPytest: string | false = !hasPytest && !process.env.CI ? `${PYTHON} -m pytest not available` : false;
