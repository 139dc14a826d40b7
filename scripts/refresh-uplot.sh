#!/usr/bin/env bash
# Refreshes the chart library the HTML report embeds (internal/report/assets/uplot)
# from npm: the minified script, its stylesheet, its licence and its version.
# The build never needs npm: the files are committed. After a refresh, run
# go test ./internal/report/ (the browser tests open the page) and commit.
# Usage: scripts/refresh-uplot.sh [VERSION]   (default: the latest release)
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-$(npm view uplot version)}
dest=internal/report/assets/uplot
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "uplot@$version" >/dev/null && tar xzf "uplot-$version.tgz")
cp "$tmp/package/dist/uPlot.iife.min.js" "$tmp/package/dist/uPlot.min.css" "$tmp/package/LICENSE" "$dest/"
echo "$version" > "$dest/VERSION"
echo "uPlot $version in $dest ($(wc -c < "$dest/uPlot.iife.min.js") bytes of script)"
