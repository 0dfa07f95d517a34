# AX_SLURM
# --------
# Where the Slurm plugin headers come from.  Sched and select plugins need
# slurmctld's private headers and a configured config.h, so we build against a
# configured Slurm source tree (SLURM-NOTES.md, STYLE.md section 1).
#
#   --with-slurm-src=DIR     configured tree (DIR/config.h, or DIR plus
#                            --with-slurm-build=BUILDDIR for a VPATH build)
#   --with-slurm-build=DIR   the VPATH build directory holding config.h
#   --with-slurm-release=R   (without --with-slurm-src) the release the
#                            fetcher obtains: 22.05 (default, Debian 12's
#                            packages) or 24.11 (built into a prefix under the
#                            Slurm cache)
#   (neither)                contrib/slurm-src/agora-slurm-src fetches, configures
#                            and caches the tree matching the installed slurmctld
#   --without-slurm          build only the core, tools and unit tests
#
# The tree's version must equal major.minor.micro of the slurmctld that will
# load the plugins (slurmctld refuses plugins of another micro release): the
# slurmctld of the prefix the tree was configured with (its Makefile's
# prefix), which is Debian's /usr/sbin/slurmctld for Debian's 22.05 tree.
AC_DEFUN([AX_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--without-slurm], [do not build the Slurm plugins])],
    [], [with_slurm=yes])
  AC_ARG_WITH([slurm-src],
    [AS_HELP_STRING([--with-slurm-src=DIR], [configured Slurm source tree (22.05 or 24.11)])],
    [SLURM_SRC="$withval"], [SLURM_SRC=""])
  AC_ARG_WITH([slurm-build],
    [AS_HELP_STRING([--with-slurm-build=DIR], [Slurm VPATH build dir (holds config.h)])],
    [SLURM_BUILD="$withval"], [SLURM_BUILD=""])
  AC_ARG_WITH([slurm-release],
    [AS_HELP_STRING([--with-slurm-release=R], [Slurm release the fetcher obtains: 22.05 (default) or 24.11])],
    [ax_slurm_release="$withval"], [ax_slurm_release=22.05])
  SLURM_TREE_VERSION=none
  SLURM_PREFIX=""
  AS_IF([test "x$with_slurm" != xno], [
    AS_IF([test -z "$SLURM_SRC"], [
      AC_MSG_CHECKING([for a cached Slurm $ax_slurm_release source tree (agora-slurm-src)])
      ax_slurm_out=`$srcdir/contrib/slurm-src/agora-slurm-src -q --release "$ax_slurm_release" | tail -1` ||
        AC_MSG_ERROR([could not obtain the Slurm $ax_slurm_release source; run contrib/slurm-src/agora-slurm-src --release $ax_slurm_release or pass --with-slurm-src=DIR or --without-slurm])
      eval "$ax_slurm_out"
      AC_MSG_RESULT([$SLURM_SRC])
    ])
    AS_IF([test -z "$SLURM_BUILD"], [SLURM_BUILD="$SLURM_SRC"])
    AS_IF([test ! -f "$SLURM_SRC/src/slurmctld/slurmctld.h"],
      [AC_MSG_ERROR([$SLURM_SRC is not a Slurm source tree (no src/slurmctld/slurmctld.h)])])
    AS_IF([test ! -f "$SLURM_BUILD/config.h"],
      [AC_MSG_ERROR([$SLURM_BUILD/config.h not found: the Slurm tree must be configured (or pass --with-slurm-build)])])
    SLURM_TREE_VERSION=`sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"/\1/p' "$SLURM_BUILD/config.h"`
    AS_CASE([$SLURM_TREE_VERSION],
      [22.05.*|24.11.*], [],
      [AC_MSG_ERROR([Slurm source tree $SLURM_SRC is version $SLURM_TREE_VERSION; Agora supports 22.05 and 24.11 (plugins/common/agora_compat.h)])])
    AS_IF([test -z "$SLURM_PREFIX" && test -f "$SLURM_BUILD/Makefile"],
      [SLURM_PREFIX=`sed -n 's/^prefix = //p' "$SLURM_BUILD/Makefile" | head -1`])
    AS_IF([test "x$SLURM_PREFIX" = x/usr], [SLURM_PREFIX=""])
    AS_IF([test -n "$SLURM_PREFIX"], [SLURM_CTLD_BIN="$SLURM_PREFIX/sbin/slurmctld"], [SLURM_CTLD_BIN=/usr/sbin/slurmctld])
    AC_MSG_CHECKING([Slurm version of $SLURM_CTLD_BIN])
    ax_slurm_inst=""
    AS_IF([test -x "$SLURM_CTLD_BIN"], [ax_slurm_inst=`$SLURM_CTLD_BIN -V 2>/dev/null | sed -n 's/^slurm[[^ ]]* //p'`])
    AS_IF([test -z "$ax_slurm_inst" && test -z "$SLURM_PREFIX" && test -f /usr/include/slurm/slurm_version.h],
      [ax_slurm_inst=`sed -n 's/^#define SLURM_VERSION_STRING "\(.*\)"/\1/p' /usr/include/slurm/slurm_version.h`])
    AC_MSG_RESULT([${ax_slurm_inst:-unknown}])
    AS_IF([test -n "$ax_slurm_inst" && test "x$ax_slurm_inst" != "x$SLURM_TREE_VERSION"],
      [AC_MSG_ERROR([Slurm source tree $SLURM_SRC is version $SLURM_TREE_VERSION but $SLURM_CTLD_BIN is $ax_slurm_inst: plugins must match major.minor.micro exactly (slurmctld rejects others). Point --with-slurm-src at a $ax_slurm_inst tree, or use --with-slurm-release.])])
    AS_IF([test -z "$ax_slurm_inst"],
      [AC_MSG_WARN([no slurmctld found at $SLURM_CTLD_BIN; building plugins for $SLURM_TREE_VERSION])])
    SLURM_PLUGIN_CPPFLAGS="-DHAVE_CONFIG_H -isystem $SLURM_BUILD -isystem $SLURM_SRC"
    SLURM_PLUGIN_DIR_STOCK="/usr/lib/x86_64-linux-gnu/slurm-wlm"
    AC_ARG_VAR([SLURM_STOCK_PLUGINDIR], [directory of the stock Slurm plugins (for the cons_tres wrapper)])
    AS_IF([test -z "$SLURM_STOCK_PLUGINDIR" && test -n "$SLURM_PREFIX"],
      [SLURM_STOCK_PLUGINDIR="$SLURM_PREFIX/lib/slurm"])
    AS_IF([test -z "$SLURM_STOCK_PLUGINDIR"], [
      for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/`gcc -print-multiarch 2>/dev/null`/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
        AS_IF([test -f "$d/select_cons_tres.so"], [SLURM_STOCK_PLUGINDIR="$d"; break])
      done
    ])
    AS_IF([test -z "$SLURM_STOCK_PLUGINDIR"], [SLURM_STOCK_PLUGINDIR=/usr/lib/x86_64-linux-gnu/slurm-wlm])
  ])
  AM_CONDITIONAL([HAVE_SLURM], [test "x$with_slurm" != xno])
  dnl Plugins whose host a release lacks (plugins/common/agora_compat.h):
  dnl SlurmctldPlugstack went in 23.02.
  AM_CONDITIONAL([SLURM_CTLD_PLUGSTACK], [test "x$with_slurm" != xno && test "x${SLURM_TREE_VERSION%%.*}" = x22])
  SLURM_RELEASE=`echo "$SLURM_TREE_VERSION" | cut -d. -f1-2`
  AC_SUBST([SLURM_RELEASE])
  dnl The select_p_* operations of the release (select wrapper's export check).
  AS_CASE([$SLURM_RELEASE], [22.05], [SLURM_SELECT_P_CNT=36], [24.11], [SLURM_SELECT_P_CNT=31],
    [SLURM_SELECT_P_CNT=unknown])
  AC_SUBST([SLURM_SELECT_P_CNT])
  AC_SUBST([SLURM_SRC])
  AC_SUBST([SLURM_BUILD])
  AC_SUBST([SLURM_TREE_VERSION])
  AC_SUBST([SLURM_PLUGIN_CPPFLAGS])
  AC_SUBST([SLURM_STOCK_PLUGINDIR])
  dnl The public libslurm of the same release (agoractl, agorad): a 22.05
  dnl client cannot talk to a 24.11 controller.
  AS_IF([test -n "$SLURM_PREFIX"],
    [SLURM_PUBLIC_CPPFLAGS="-isystem $SLURM_PREFIX/include"
     SLURM_PUBLIC_LIBS="-L$SLURM_PREFIX/lib -Wl,-rpath,$SLURM_PREFIX/lib -lslurm"],
    [SLURM_PUBLIC_CPPFLAGS=""
     SLURM_PUBLIC_LIBS="-lslurm"])
  AS_IF([test -z "$SLURM_CTLD_BIN"], [SLURM_CTLD_BIN=/usr/sbin/slurmctld])
  AC_SUBST([SLURM_PREFIX])
  AC_SUBST([SLURM_CTLD_BIN])
  AC_SUBST([SLURM_PUBLIC_CPPFLAGS])
  AC_SUBST([SLURM_PUBLIC_LIBS])
])
