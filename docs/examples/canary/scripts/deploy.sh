#!/bin/sh
# The same deploy on every server of the fleet.
set -eu
if [ -f package.json ]; then
  npm install --no-audit --no-fund
  npm run build --if-present
fi
systemctl restart web
