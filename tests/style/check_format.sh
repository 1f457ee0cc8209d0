#!/usr/bin/env bash
# The sources of lib/, include/ and backends/ as the repository's
# .clang-format lays them out (clang-format 14, Debian's; ./run test
# installs it). Skipped (77) without it.
#   bash tests/style/check_format.sh SOURCE_ROOT
set -euo pipefail
cd "${1:-.}"
fmt=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$fmt" ] || { echo "no clang-format: skipped"; exit 77; }
mapfile -t files < <(git ls-files 'lib/*.cpp' 'lib/*.hpp' 'lib/*.h' 'include/*.h' 'include/*.hpp' \
                                  'backends/*.cpp' 'backends/*.hpp' 'backends/*.h' 2>/dev/null ||
                     find lib include backends -name '*.cpp' -o -name '*.hpp' -o -name '*.h')
"$fmt" --dry-run --Werror "${files[@]}"
echo "${#files[@]} files laid out as .clang-format says ($("$fmt" --version))"
