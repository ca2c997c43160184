#!/bin/sh
# The build, in the new release directory. npm install, not npm ci: ci deletes node_modules first, and with it
# the cache carried from the live release.
set -eu
npm install --no-audit --no-fund
npm run build --if-present
