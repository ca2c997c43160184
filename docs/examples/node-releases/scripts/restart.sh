#!/bin/sh
# After the switch, in /srv/shop/site/current: the app's unit runs from there.
set -eu
systemctl restart shop
