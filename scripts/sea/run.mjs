// ./entry.mjs first (ES modules run in import order), then the command.
import './entry.mjs';
import 'rookery-dist/cli.js';
