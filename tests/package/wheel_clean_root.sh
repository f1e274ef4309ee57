#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# package.wheel_clean_root: the enact wheel installed with pip into a fresh venv in a clean Debian 12
# root (clean_root.sh: mmdebstrap from Debian's archive, with python3 and python3-venv and nothing
# of enact's build dependencies), where the package's tests run against the libraries the wheel
# bundles, and the libraries the process maps are checked to be the wheel's own.
#
#   tests/package/wheel_clean_root.sh SOURCE_DIR DIST_DIR ROOT CACHE
#
# SOURCE_DIR is the repository, DIST_DIR holds the one enact-*.whl (bindings.python_wheel makes
# it), ROOT the directory the root is unpacked into (fresh each run), CACHE the clean-root cache
# shared with package.deb_clean_root.
set -euo pipefail
[ $# -eq 4 ] || { sed -n '8p' "$0" >&2; exit 2; }
source_dir=$(realpath "$1")
dist=$(realpath "$2")
root=$3
cache=$4

shopt -s nullglob
wheels=("$dist"/enact-*.whl)
[ ${#wheels[@]} -eq 1 ] || { echo "expected one wheel in $dist, found ${#wheels[@]}" >&2; exit 1; }
wheel=$(basename "${wheels[0]}")

"$source_dir/tests/package/clean_root.sh" --cache "$cache" --include python3,python3-venv --fresh \
  --bind "$dist:/mnt/dist" --bind "$source_dir/bindings/python:/mnt/python" \
  --bind "$source_dir/tests/vectors:/mnt/vectors" "$root" -- /bin/sh -ec "
    # Clean: none of the libraries the wheel bundles is installed in the root.
    for lib in libsecp256k1.so.1 libboost_json.so.1.81.0 libcpp-httplib.so.0.11 libbrotlienc.so.1; do
      if ldconfig -p | grep -q \"\$lib\"; then echo \"the root is not clean: \$lib\"; exit 1; fi
    done
    python3 -m venv /opt/venv
    /opt/venv/bin/pip install --no-index --disable-pip-version-check --quiet /mnt/dist/$wheel
    /opt/venv/bin/pip show enact | grep -E '^(Name|Version|License):'
    cd /tmp
    site=\$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()[\"platlib\"])')
    PYTHONDONTWRITEBYTECODE=1 /opt/venv/bin/python /mnt/python/wheel_libs.py loaded \"\$site\"
    PYTHONDONTWRITEBYTECODE=1 ENACT_VECTORS_DIR=/mnt/vectors /opt/venv/bin/python -m unittest discover \
      -s /mnt/python/tests
  "
echo "package.wheel_clean_root: $wheel installed and tested in a clean Debian 12 root"
