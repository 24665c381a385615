#!/usr/bin/env bash
# Assembles a format-identification corpus from public repositories of real files written by
# other tools, for bench/identify_bench.py:
#   bash bench/id-corpus.sh OUT [GITDIR...]
# Without GITDIR it clones (shallow) openpreserve/format-corpus, apache/tika and
# exiftool/exiftool from GitHub; with them it reads those clones (or bare git directories)
# instead. OUT/files/<repo>/... holds the files as named in their repository (tika: every
# test-documents folder; exiftool: t/images); OUT/noext/ holds the same files as hard links
# named by number without an extension (OUT/noext.map says which is which), the way a WARC
# payload reaches an identifier. Files a clone lacks (Git LFS, large objects) are left out.
set -euo pipefail
out=${1:?usage: id-corpus.sh OUT [GITDIR...]}
shift
mkdir -p "$out/files" "$out/noext"
if [ $# -eq 0 ]; then
  for r in openpreserve/format-corpus apache/tika exiftool/exiftool; do
    dir="$out/clones/${r//\//+}"
    [ -d "$dir" ] || git clone --quiet --depth 1 --bare "https://github.com/$r" "$dir"
    set -- "$@" "$dir"
  done
fi

# Which part of each repository is corpus, by its name.
wanted() {
  case "$1" in
    *tika*) grep '/test-documents/' ;;
    *exiftool*) grep '^t/images/' ;;
    *) grep -v -E '(^|/)(\.git[a-z]*|README[^/]*|LICEN[CS]E[^/]*)$' ;;
  esac
}

for git in "$@"; do
  name=$(basename "$(cd "$git" && pwd)" .git)
  [ "$name" = repo ] && name=$(basename "$(dirname "$(cd "$git" && pwd)")")
  dest="$out/files/$name"
  git -C "$git" ls-tree -r -z --full-tree HEAD | tr '\0' '\n' | while IFS=$'\t' read -r meta path; do
    read -r _mode type sha <<<"$meta"
    [ "$type" = blob ] || continue
    printf '%s\n' "$path" | wanted "$name" >/dev/null || continue
    git -C "$git" cat-file -e "$sha" 2>/dev/null || continue
    mkdir -p "$dest/$(dirname "$path")"
    git -C "$git" cat-file blob "$sha" >"$dest/$path"
  done
done

i=0
rm -f "$out/noext"/* "$out/noext.map"
find "$out/files" -type f | sort | while read -r f; do
  i=$((i + 1))
  n=$(printf 'f%05d' "$i")
  ln "$f" "$out/noext/$n"
  printf '%s %s\n' "$n" "${f#"$out"/files/}" >>"$out/noext.map"
done
echo "$(find "$out/files" -type f | wc -l) files in $out/files, $(du -sh "$out/files" | cut -f1)"
