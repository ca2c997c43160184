#!/bin/sh
# Runs in the clone, reset to the tag's commit (SERVICE_COMMIT).
set -eu
echo "deploying $(git rev-parse --short "$SERVICE_COMMIT")"
if [ -f package.json ]; then
  npm install --no-audit --no-fund
  npm run build --if-present
fi
systemctl restart api
