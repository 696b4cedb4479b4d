#!/usr/bin/env bash
# The shared libraries export only their public surface: every dynamic
# symbol libplugrt defines starts with prt_ (plugrt.h's PRT_API), and the
# standard plugin library defines exactly its entry point.
set -euo pipefail
lib=$1 plugins=$2
fail=0
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^prt_' | grep -v '^$' || true)
if [ -n "$bad" ]; then
  echo "libplugrt exports symbols without the prt_ prefix:"; echo "$bad"; fail=1
fi
n=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | grep -c '^prt_' || true)
if [ "$n" -lt 50 ]; then
  echo "libplugrt exports only $n prt_ functions; the public API is missing"; fail=1
fi
got=$(nm -D --defined-only "$plugins" | awk '{print $3}' | grep -v '^$' | sort | tr '\n' ' ')
if [ "$got" != "prt_plugin_library_open " ]; then
  echo "libplugrt_plugins exports '$got', not just prt_plugin_library_open"; fail=1
fi
# The soname carries the ABI version (major.minor while major is 0).
readelf -d "$lib" | grep -q 'SONAME.*libplugrt\.so\.[0-9]' || { echo "libplugrt has no versioned SONAME"; fail=1; }
# Both libraries load on machines with no GPU, driver or CUDA libraries: the
# CUDA runtime is linked in statically and nothing else of CUDA is needed.
for f in "$lib" "$plugins"; do
  cuda_needed=$(readelf -d "$f" | grep NEEDED | grep -Ei 'libcuda|libcudart|libcublas|libcudnn|libnvrtc' || true)
  if [ -n "$cuda_needed" ]; then
    echo "$f needs CUDA libraries at load time:"; echo "$cuda_needed"; fail=1
  fi
done
[ "$fail" = 0 ] && echo "exports: ok ($n prt_ functions)"
exit $fail
