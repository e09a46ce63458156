#!/usr/bin/env bash
# scripts/third_party_notices on the built libcharkit_c: every library whose
# code it holds is named with its copyright file, and nothing of the
# toolchain's runtime. Checked against what the build says independently:
# the objects' dependency lists must name Eigen's and nlohmann/json's
# headers, and the link must take libxsmm's static archive.
# Usage: notices_check.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$("$root/scripts/third_party_notices" "$build" charkit_c)
fail() { echo "notices_check: $*" >&2; exit 1; }
inputs=$(ninja -C "$build" -t inputs charkit_c)
objs=$(grep '\.o$' <<<"$inputs")
# shellcheck disable=SC2086
deps=$(cd "$build" && ninja -t deps $objs)
check() {  # PACKAGE  EVIDENCE-REGEX  (in the build's own records)
  if grep -qE "$2" <<<"$deps"$'\n'"$inputs"; then
    grep -q "^$1 " <<<"$out" || fail "$1 is compiled in but has no notice"
    grep -qF "$(head -c 300 "/usr/share/doc/$1/copyright")" <<<"$out" ||
      fail "$1's copyright file is not in the notices"
  fi
}
check libeigen3-dev '/usr/include/eigen3/'
check nlohmann-json3-dev '/usr/include/nlohmann/'
check libxsmm-dev '/usr/lib/libxsmm\.a$'
grep -qE '^(nlohmann-json3-dev|libeigen3-dev) ' <<<"$out" || fail "no notice at all for the header-only libraries"
if grep -qE '^(libc6|libc6-dev|libstdc\+\+-[0-9]+-dev|linux-libc-dev) ' <<<"$out"; then
  fail "the toolchain's runtime is listed"
fi
# A shared library given as bundled gets its package's notice.
z=$(readlink -f "$(ldconfig -p | awk '/libz\.so\.1 / {print $NF; exit}')")
grep -q '^zlib1g ' <<<"$("$root/scripts/third_party_notices" "$build" charkit_c "$z")" ||
  fail "a bundled libz.so.1 gets no notice"
echo "notices_check: OK ($(grep -cE '^[a-z0-9.+-]+ [^ ]+$' <<<"$out") packages)"
