#!/bin/sh
# Builds one app of the monorepo and restarts it: sh scripts/deploy.sh <app>, in that app's clone.
set -eu
app=$1
cd "apps/$app"
if [ -f package.json ]; then
  npm install --no-audit --no-fund
  npm run build --if-present
fi
systemctl restart "$app"
echo "deployed $app at $(git rev-parse --short HEAD)"
