#!/usr/bin/env bash
# Builds the public YAML corpus of the loader's differential test (test/repo/yaml-differential.test.ts) from the public
# repositories below at pinned commits: every *.yaml and *.yml file at its path, in a folder named owner+name, Helm
# templates left out (files under a templates/ folder or holding "{{"). Needs curl, tar and xz, and internet access.
# Prints the path of the .tar.xz it wrote; run the test with VC_YAML_CORPUS set to it:
#   export VC_YAML_CORPUS=$(scripts/fetch-yaml-corpus.sh)
# Usage: scripts/fetch-yaml-corpus.sh [OUT.tar.xz]   (default ${XDG_CACHE_HOME:-~/.cache}/vc/public-yaml.tar.xz)
set -euo pipefail

# owner/name commit files-expected (the counts of the corpus the test was written against; docs/testing.md names the
# licences)
REPOSITORIES=(
  "argoproj/argocd-example-apps 0d521c6e049889134f3122eb32d7ed342f43ca0d 53"
  "cert-manager/cert-manager 2d0d7f7f74241a9cbf79f0e2a7bb247238ee09fd 47"
  "istio/istio 86c9f01fd735fb01d8192f5bcaf0d424afb7f14c 2952"
  "kubernetes/examples 279e8e4fe314f6cb7bc55fa3fbc21bbeaa48c0ea 241"
  "prometheus-operator/kube-prometheus 4d719f1dea8853540b3823ab1fbe6be74a9953b3 111"
)

out=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/vc/public-yaml.tar.xz}
# GitHub serves any commit of a public repository as a tarball with one top folder, <name>-<commit>/. (The test of this
# script points the template at local tarballs: file://...)
url_template=${VC_CORPUS_URL_TEMPLATE:-https://codeload.github.com/%REPO%/tar.gz/%COMMIT%}
for tool in curl tar xz; do
  command -v "$tool" >/dev/null || { echo "fetch-yaml-corpus: $tool is required" >&2; exit 2; }
done
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for entry in "${REPOSITORIES[@]}"; do
  read -r repo commit expected <<< "$entry"
  folder=${repo/\//+}
  echo "fetching $repo at $commit" >&2
  mkdir -p "$work/src/$folder" "$work/corpus/$folder"
  url=${url_template//%REPO%/$repo}
  url=${url//%COMMIT%/$commit}
  curl -fsSL --retry 3 "$url" | tar -xz -C "$work/src/$folder" --strip-components=1
  (
    cd "$work/src/$folder"
    find . -type f \( -name '*.yaml' -o -name '*.yml' \) -not -path '*/templates/*' -print0 > "$work/yaml"
    # grep -L lists the files without "{{" (its exit status says nothing useful here)
    xargs -0 -r grep -L -Z -F '{{' -- < "$work/yaml" > "$work/plain" || true
    while IFS= read -r -d '' file; do
      mkdir -p "$work/corpus/$folder/$(dirname "$file")"
      cp -p "$file" "$work/corpus/$folder/$file"
    done < "$work/plain"
  )
  got=$(find "$work/corpus/$folder" -type f | wc -l)
  if [ "$got" -ne "$expected" ]; then
    echo "fetch-yaml-corpus: warning: $repo gave $got files, the corpus the test was written against has $expected" >&2
  fi
  rm -rf "$work/src/$folder"
done

folders=()
for entry in "${REPOSITORIES[@]}"; do
  read -r repo _ <<< "$entry"
  folders+=("${repo/\//+}")
done
tar -C "$work/corpus" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cJf "$out.tmp" "${folders[@]}"
mv "$out.tmp" "$out"
echo "$(tar -tJf "$out" | grep -cv '/$') files in $out" >&2
echo "$out"
