#!/usr/bin/env bash
# Re-vendor PDF.js from npm into ragline/web/static/vendor/pdfjs/ (checked in; run this to
# update it, then commit). The console loads only these two modules, same-origin.
set -euo pipefail
VERSION=${1:-5.6.205}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$HERE/static/vendor/pdfjs
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack --silent "pdfjs-dist@$VERSION" >/dev/null && tar xzf "pdfjs-dist-$VERSION.tgz")
mkdir -p "$OUT"
cp "$TMP/package/build/pdf.min.mjs" "$TMP/package/build/pdf.worker.min.mjs" "$TMP/package/LICENSE" "$OUT/"
echo "pdfjs-dist $VERSION" >"$OUT/VERSION"
echo "vendored pdfjs-dist $VERSION into $OUT"
