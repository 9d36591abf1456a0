dnl dlbench's configure checks.

dnl DLB_REQUIRE_LIB(NAME, LIB, HEADER, FUNCTION, DEBIAN-PACKAGE)
dnl A required library: stop with the package to install when it is missing.
AC_DEFUN([DLB_REQUIRE_LIB], [
  AC_CHECK_HEADER([$3], [],
    [AC_MSG_ERROR([$1 header $3 not found: install Debian's $5 (apt-get install $5)])])
  AC_SEARCH_LIBS([$4], [$2], [],
    [AC_MSG_ERROR([$1 library not found: install Debian's $5 (apt-get install $5)])])
])

dnl oneDNN: --with-onednn[=PREFIX]. Without PREFIX the system's (Debian's
dnl libdnnl-dev, 2.6), used when found; with PREFIX the one installed
dnl there (PREFIX/include/oneapi/dnnl/dnnl.h, PREFIX/lib/libdnnl.so), as
dnl ci/onednn-prefix unpacks PyPI's oneDNN 3 wheels. A PREFIX library is
dnl not on the loader's path, so the programs carry an rpath to it
dnl (ONEDNN_LDFLAGS, on the programs themselves: libtool drops rpaths from
dnl the core's convenience library instead of passing them on). The
dnl headers' version is recorded (DLB_ONEDNN_BUILD) and must be the
dnl library's: headers of one version over the library of another would
dnl compile and then crash.
AC_DEFUN([DLB_CHECK_ONEDNN], [
  AC_ARG_WITH([onednn],
    [AS_HELP_STRING([--with-onednn@<:@=PREFIX@:>@],
      [build the cpu backend on oneDNN 2.6 or later, or 3.x: the system's (default: when found) or the one installed under PREFIX])],
    [], [with_onednn=check])
  dlb_have_onednn=no
  dlb_have_onednn_msg="no (the cpu backend is not built; install libdnnl-dev)"
  dlb_onednn_where=system
  dlb_onednn_major=0
  ONEDNN_CFLAGS=
  ONEDNN_LIBS=-ldnnl
  ONEDNN_LDFLAGS=
  AS_CASE([$with_onednn],
    [no|yes|check], [],
    [dlb_onednn_where=$with_onednn
     AS_IF([test -f "$with_onednn/include/oneapi/dnnl/dnnl.h"], [],
       [AC_MSG_ERROR([--with-onednn=$with_onednn: $with_onednn/include/oneapi/dnnl/dnnl.h not found: PREFIX must be a oneDNN installation (ci/onednn-prefix DIR makes one from PyPI's wheels; --with-onednn alone uses the system's)])])
     AS_IF([ls "$with_onednn"/lib/libdnnl.so* >/dev/null 2>&1], [],
       [AC_MSG_ERROR([--with-onednn=$with_onednn: no libdnnl.so in $with_onednn/lib: the headers are there but not the library (PyPI's onednn-devel-cpu-gomp wheel needs onednn-cpu-gomp beside it)])])
     ONEDNN_CFLAGS="-I$with_onednn/include"
     ONEDNN_LIBS="-L$with_onednn/lib -ldnnl"
     ONEDNN_LDFLAGS="-Wl,-rpath,$with_onednn/lib"])
  AS_IF([test "x$with_onednn" != xno], [
    dlb_save_CPPFLAGS=$CPPFLAGS
    dlb_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS $ONEDNN_CFLAGS"
    LIBS="$ONEDNN_LDFLAGS $ONEDNN_LIBS $LIBS"
    dnl Not AC_CHECK_HEADER and AC_CHECK_LIB: cached answers about the
    dnl system's oneDNN would stand for PREFIX's.
    AC_MSG_CHECKING([for oneDNN in $dlb_onednn_where])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <oneapi/dnnl/dnnl.h>]],
        [[dnnl_engine_t e; return dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success;]])],
      [dlb_have_onednn=yes])
    AC_MSG_RESULT([$dlb_have_onednn])
    AS_IF([test "x$dlb_have_onednn" = xyes], [
      AC_COMPUTE_INT([dlb_onednn_major], [DNNL_VERSION_MAJOR],
        [#include <oneapi/dnnl/dnnl_version.h>], [dlb_onednn_major=0])
      AC_COMPUTE_INT([dlb_onednn_minor], [DNNL_VERSION_MINOR],
        [#include <oneapi/dnnl/dnnl_version.h>], [dlb_onednn_minor=0])
      AC_COMPUTE_INT([dlb_onednn_patch], [DNNL_VERSION_PATCH],
        [#include <oneapi/dnnl/dnnl_version.h>], [dlb_onednn_patch=0])
      dlb_onednn_version="$dlb_onednn_major.$dlb_onednn_minor.$dlb_onednn_patch"
      dnl The cpu backend's shim (cpu_dnnl_api.h) speaks 2.6+ and 3.x.
      AS_IF([test "$dlb_onednn_major" -eq 2 && test "$dlb_onednn_minor" -ge 6], [],
            [test "$dlb_onednn_major" -eq 3], [],
        [AC_MSG_ERROR([oneDNN $dlb_onednn_version in $dlb_onednn_where: the cpu backend needs 2.6 or later, or 3.x (--without-onednn builds without it)])])
      AC_MSG_CHECKING([whether the oneDNN library is $dlb_onednn_version too])
      AC_RUN_IFELSE([AC_LANG_PROGRAM([[#include <oneapi/dnnl/dnnl.h>]],
          [[const dnnl_version_t *v = dnnl_version();
            return v->major != DNNL_VERSION_MAJOR || v->minor != DNNL_VERSION_MINOR;]])],
        [AC_MSG_RESULT([yes])],
        [AC_MSG_RESULT([no])
         AC_MSG_ERROR([the oneDNN headers in $dlb_onednn_where are $dlb_onednn_version but the library they link with is another version: install the headers and the library of one release])],
        [AC_MSG_RESULT([cross-compiling: not checked])])
    ])
    CPPFLAGS=$dlb_save_CPPFLAGS
    LIBS=$dlb_save_LIBS
    AS_IF([test "x$dlb_have_onednn" = xyes],
      [dlb_have_onednn_msg="yes ($dlb_onednn_version, $dlb_onednn_where)"
       AC_DEFINE([HAVE_ONEDNN], [1], [oneDNN found])
       AC_DEFINE_UNQUOTED([DLB_ONEDNN_BUILD], ["$dlb_onednn_version ($dlb_onednn_where)"],
         [the oneDNN headers the cpu backend was built with, and where from])],
      [AS_CASE([$with_onednn],
         [check], [],
         [yes], [AC_MSG_ERROR([--with-onednn given but oneDNN not found: install Debian's libdnnl-dev])],
         [AC_MSG_ERROR([--with-onednn=$with_onednn: a program using oneDNN there does not link (config.log says why)])])])
  ])
  AS_IF([test "x$dlb_have_onednn" != xyes],
    [ONEDNN_CFLAGS= ONEDNN_LIBS= ONEDNN_LDFLAGS=])
  AC_SUBST([ONEDNN_CFLAGS])
  AC_SUBST([ONEDNN_LIBS])
  AC_SUBST([ONEDNN_LDFLAGS])
  AM_CONDITIONAL([HAVE_ONEDNN], [test "x$dlb_have_onednn" = xyes])
  dnl Which half of the cpu backend's shim (cpu_dnnl2.c or cpu_dnnl3*.c).
  AM_CONDITIONAL([HAVE_ONEDNN3],
    [test "x$dlb_have_onednn" = xyes && test "$dlb_onednn_major" -ge 3])
])

dnl Open MPI: --with-mpi (default: when mpicc is found).
AC_DEFUN([DLB_CHECK_MPI], [
  AC_ARG_WITH([mpi],
    [AS_HELP_STRING([--with-mpi], [build MPI support (default: when found)])],
    [], [with_mpi=check])
  dlb_have_mpi=no
  dlb_have_mpi_msg="no (install libopenmpi-dev for multi-process data parallelism)"
  AS_IF([test "x$with_mpi" != xno], [
    AS_IF([$PKG_CONFIG --exists ompi-c 2>/dev/null], [
      dlb_have_mpi=yes
      MPI_CFLAGS=`$PKG_CONFIG --cflags ompi-c`
      MPI_LIBS=`$PKG_CONFIG --libs ompi-c`
      dlb_have_mpi_msg="yes (Open MPI `$PKG_CONFIG --modversion ompi-c`)"
      AC_DEFINE([HAVE_MPI], [1], [MPI found])
    ], [AS_IF([test "x$with_mpi" = xyes],
        [AC_MSG_ERROR([--with-mpi given but Open MPI not found: install Debian's libopenmpi-dev])])])
  ])
  AC_SUBST([MPI_CFLAGS])
  AC_SUBST([MPI_LIBS])
  AM_CONDITIONAL([HAVE_MPI], [test "x$dlb_have_mpi" = xyes])
])

dnl CUDA toolkit with cuDNN, cuBLAS(Lt), cuSPARSE and NCCL: --with-cuda[=DIR].
AC_DEFUN([DLB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [CUDA toolkit prefix (default: /usr/local/cuda when found)])],
    [], [with_cuda=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST], [nvcc -gencode list (default: sm_80, sm_90 and PTX)])],
    [CUDA_ARCH_FLAGS=$withval],
    [CUDA_ARCH_FLAGS="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"])
  dlb_have_cuda=no
  dlb_have_cuda_msg="no (the cuda backend is not built)"
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [CUDA_HOME=/usr/local/cuda],
    [CUDA_HOME=$with_cuda])
  AS_IF([test "x$with_cuda" != xno], [
    AC_PATH_PROG([NVCC], [nvcc], [], [$CUDA_HOME/bin:$PATH])
    dlb_save_CPPFLAGS=$CPPFLAGS
    dlb_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS -I$CUDA_HOME/include"
    LIBS="-L$CUDA_HOME/lib64 $LIBS"
    dlb_cuda_ok=yes
    AS_IF([test -z "$NVCC"], [dlb_cuda_ok=no; dlb_cuda_why="nvcc not found"])
    for dlb_h in cuda_runtime.h cudnn.h cublasLt.h cusparse.h nccl.h; do
      AS_IF([test $dlb_cuda_ok = yes],
        [AC_CHECK_HEADER([$dlb_h], [], [dlb_cuda_ok=no; dlb_cuda_why="$dlb_h not found"])])
    done
    AS_IF([test $dlb_cuda_ok = yes], [AC_CHECK_LIB([cudart], [cudaGetDeviceCount], [], [dlb_cuda_ok=no; dlb_cuda_why="libcudart not found"])])
    AS_IF([test $dlb_cuda_ok = yes], [AC_CHECK_LIB([cudnn], [cudnnCreate], [], [dlb_cuda_ok=no; dlb_cuda_why="libcudnn not found"])])
    AS_IF([test $dlb_cuda_ok = yes], [AC_CHECK_LIB([cublasLt], [cublasLtCreate], [], [dlb_cuda_ok=no; dlb_cuda_why="libcublasLt not found"])])
    AS_IF([test $dlb_cuda_ok = yes], [AC_CHECK_LIB([cusparse], [cusparseCreate], [], [dlb_cuda_ok=no; dlb_cuda_why="libcusparse not found"])])
    AS_IF([test $dlb_cuda_ok = yes], [AC_CHECK_LIB([nccl], [ncclGetVersion], [], [dlb_cuda_ok=no; dlb_cuda_why="libnccl not found"])])
    CPPFLAGS=$dlb_save_CPPFLAGS
    LIBS=$dlb_save_LIBS
    AS_IF([test $dlb_cuda_ok = yes], [
      dlb_have_cuda=yes
      dlb_have_cuda_msg="yes ($CUDA_HOME, `$NVCC --version | sed -n 's/.*release \(@<:@0-9.@:>@*\).*/\1/p'`)"
      CUDA_CFLAGS="-I$CUDA_HOME/include"
      CUDA_LIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudnn -lcublasLt -lcublas -lcusparse -lnccl -lcudart"
      AC_DEFINE([HAVE_CUDA], [1], [CUDA toolkit found])
    ], [
      dlb_have_cuda_msg="no ($dlb_cuda_why)"
      AS_IF([test "x$with_cuda" != xcheck],
        [AC_MSG_ERROR([--with-cuda given but $dlb_cuda_why under $CUDA_HOME])])
    ])
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([CUDA_ARCH_FLAGS])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$dlb_have_cuda" = xyes])
])

dnl DLB_PLUGIN(NAME, DEFAULT, DESCRIPTION): --enable-plugin-NAME and an
dnl automake conditional PLUGIN_NAME, as collectd does for its plugins.
AC_DEFUN([DLB_PLUGIN], [
  AC_ARG_ENABLE([plugin-$1],
    [AS_HELP_STRING([--disable-plugin-$1], [do not build the $1 plugin ($3)])],
    [dlb_plugin_$1=$enableval], [dlb_plugin_$1=$2])
  AM_CONDITIONAL(m4_toupper([PLUGIN_$1]), [test "x$dlb_plugin_$1" = xyes])
  AS_IF([test "x$dlb_plugin_$1" = xyes], [dlb_plugins_enabled="$dlb_plugins_enabled $1"])
])

dnl DLB_CHECK_TARGET(MACRO, TARGET, INCLUDES, BODY): whether the compiler
dnl builds BODY inside a function carrying __attribute__((target(TARGET))),
dnl as the roofline probe's kernels do; defines MACRO to 1 when it does, so
dnl that an older compiler (or another architecture) builds without them.
AC_DEFUN([DLB_CHECK_TARGET], [
  AC_CACHE_CHECK([whether $CC compiles target("$2") intrinsics],
    [dlb_cv_target_$1], [
    AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
$3
__attribute__((target("$2"))) int dlb_target_probe(const void *p);
__attribute__((target("$2"))) int dlb_target_probe(const void *p)
{
$4
}
]])], [dlb_cv_target_$1=yes], [dlb_cv_target_$1=no])])
  AS_IF([test "x$dlb_cv_target_$1" = xyes],
    [AC_DEFINE([$1], [1], [the compiler builds target("$2") kernels])])
])

dnl The roofline probe's optional kernels (core/peak/peak_kernels.c, core/peak/peak_amx.c).
AC_DEFUN([DLB_CHECK_PEAK_KERNELS], [
  DLB_CHECK_TARGET([DLB_HAVE_AVX512BF16], [avx512f,avx512bf16],
    [#include <immintrin.h>], [
  __m512 q = _mm512_set1_ps(1.0f);
  __m512bh h = _mm512_cvtne2ps_pbh(q, q);
  return _mm512_reduce_add_ps(_mm512_dpbf16_ps(q, h, h)) > 0 && p;])
  DLB_CHECK_TARGET([DLB_HAVE_AVX512VNNI], [avx512f,avx512vnni],
    [#include <immintrin.h>], [
  __m512i a = _mm512_set1_epi8(1);
  return _mm512_reduce_add_epi32(_mm512_dpbusd_epi32(a, a, a)) > 0 && p;])
  DLB_CHECK_TARGET([DLB_HAVE_AVX512FP16], [avx512f,avx512fp16],
    [#include <immintrin.h>], [
  __m512h x = _mm512_set1_ph(0.5f);
  x = _mm512_fmadd_ph(x, x, x);
  return _mm512_cvtsi512_si32(_mm512_castph_si512(x)) != 0 && p;])
  DLB_CHECK_TARGET([DLB_HAVE_AMX], [amx-tile,amx-bf16,amx-int8],
    [#include <immintrin.h>], [
#if !defined(__x86_64__)
#error AMX is 64-bit only
#endif
  _tile_loadconfig(p);
  _tile_zero(0);
  _tile_loadd(1, p, 64);
  _tile_loadd(2, p, 64);
  _tile_dpbf16ps(0, 1, 2);
  _tile_dpbssd(3, 1, 2);
  _tile_release();
  return 0;])
])

dnl SQLite 3.24 or later: the store's INSERT ... ON CONFLICT DO NOTHING
dnl (Debian 12 has 3.40).
AC_DEFUN([DLB_CHECK_SQLITE_VERSION], [
  AC_MSG_CHECKING([whether SQLite is 3.24 or later])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <sqlite3.h>
#if SQLITE_VERSION_NUMBER < 3024000
#error too old
#endif]], [])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([SQLite 3.24 or later is needed for the results store: install Debian's libsqlite3-dev (Debian 12 has 3.40)])])
])

dnl libpq, for results stores on a PostgreSQL server: --with-libpq (default:
dnl when found). Without it a postgresql:// store is refused at run time,
dnl naming the library to install.
AC_DEFUN([DLB_CHECK_LIBPQ], [
  AC_ARG_WITH([libpq],
    [AS_HELP_STRING([--with-libpq], [PostgreSQL results stores through libpq (default: when found)])],
    [], [with_libpq=check])
  dlb_have_libpq=no
  dlb_have_libpq_msg="no (install libpq-dev for PostgreSQL results stores)"
  AS_IF([test "x$with_libpq" != xno], [
    AS_IF([$PKG_CONFIG --exists libpq 2>/dev/null], [
      dlb_have_libpq=yes
      LIBPQ_CFLAGS=`$PKG_CONFIG --cflags libpq`
      LIBPQ_LIBS=`$PKG_CONFIG --libs libpq`
      dlb_have_libpq_msg="yes (libpq `$PKG_CONFIG --modversion libpq`)"
      AC_DEFINE([HAVE_LIBPQ], [1], [libpq found])
    ], [AS_IF([test "x$with_libpq" = xyes],
        [AC_MSG_ERROR([--with-libpq given but libpq not found: install Debian's libpq-dev])])])
  ])
  AC_SUBST([LIBPQ_CFLAGS])
  AC_SUBST([LIBPQ_LIBS])
  AM_CONDITIONAL([HAVE_LIBPQ], [test "x$dlb_have_libpq" = xyes])
])
