dnl dlbench's configure checks.

dnl DLB_REQUIRE_LIB(NAME, LIB, HEADER, FUNCTION, DEBIAN-PACKAGE)
dnl A required library: stop with the package to install when it is missing.
AC_DEFUN([DLB_REQUIRE_LIB], [
  AC_CHECK_HEADER([$3], [],
    [AC_MSG_ERROR([$1 header $3 not found: install Debian's $5 (apt-get install $5)])])
  AC_SEARCH_LIBS([$4], [$2], [],
    [AC_MSG_ERROR([$1 library not found: install Debian's $5 (apt-get install $5)])])
])

dnl oneDNN: --with-onednn (default: use it when found).
AC_DEFUN([DLB_CHECK_ONEDNN], [
  AC_ARG_WITH([onednn],
    [AS_HELP_STRING([--with-onednn], [build the cpu backend on oneDNN (default: when found)])],
    [], [with_onednn=check])
  dlb_have_onednn=no
  dlb_have_onednn_msg="no (the cpu backend is not built; install libdnnl-dev)"
  AS_IF([test "x$with_onednn" != xno], [
    dlb_save_LIBS=$LIBS
    AC_CHECK_HEADER([oneapi/dnnl/dnnl.h],
      [AC_CHECK_LIB([dnnl], [dnnl_engine_create],
        [dlb_have_onednn=yes; ONEDNN_LIBS=-ldnnl])])
    LIBS=$dlb_save_LIBS
    AS_IF([test "x$dlb_have_onednn" = xyes],
      [dlb_have_onednn_msg=yes; AC_DEFINE([HAVE_ONEDNN], [1], [oneDNN found])],
      [AS_IF([test "x$with_onednn" = xyes],
        [AC_MSG_ERROR([--with-onednn given but oneDNN not found: install Debian's libdnnl-dev])])])
  ])
  AC_SUBST([ONEDNN_LIBS])
  AM_CONDITIONAL([HAVE_ONEDNN], [test "x$dlb_have_onednn" = xyes])
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

dnl The roofline probe's optional kernels (core/peak_kernels.c, core/peak_amx.c).
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
