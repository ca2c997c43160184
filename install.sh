#!/bin/sh
# Installer for the single `service` binary. Not available yet: the binary release is being prepared.
main() {
  echo "install.sh: not yet available. Run the service from a checkout instead: npm install && npm start" >&2
  exit 1
}
main "$@"
