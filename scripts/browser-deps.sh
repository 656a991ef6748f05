#!/usr/bin/env bash
# Browser test dependency: Debian's chromium at /usr/bin/chromium (Playwright drives it via
# executable_path; `playwright install` is never run). Installs it when missing and we are root;
# otherwise says why the browser tests will be skipped. Never fails the caller.
set -u
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "browser-deps: /usr/bin/chromium is missing and this is not root; browser tests will be skipped" \
       "(install it with: sudo apt-get install -y chromium)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser-deps: /usr/bin/chromium is missing and apt-get is not available; browser tests will be skipped" >&2
  exit 0
fi
echo "browser-deps: installing chromium (apt-get)..." >&2
if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q && \
       DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } >&2; then
  echo "browser-deps: could not install chromium; browser tests will be skipped" >&2
fi
exit 0
