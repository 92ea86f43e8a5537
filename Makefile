# SPDX-License-Identifier: Apache-2.0
#
# glean — top-level GNU Makefile.
#
#   make              libraries, programs            -> build/{lib,bin}/
#   make check        every CUnit suite tests/*/test-*.c, then a summary line
#   make check SAN=1  the same with ASan+UBSan       -> build-san/  (alias: make check-san)
#   make check-vm     tests/vm/tests.txt + smoke test in a qemu VM (tests/vm/README.md);
#                     make check runs it after the host suites (check-host: those alone)
#   make check-systemd  glean installed and run under systemd in the VM (tests/vm/README.md);
#                     make check runs it after check-vm
#   make bench        benchmarks bench/*.c           -> build/bench/NAME
#   make bench-run    build them and run every bench/run-*.sh
#   make fuzz         libFuzzer targets fuzz/*.c     -> build/fuzz/NAME (objects in build-fuzz/)
#   make demo         install dependencies, build, run scripts/demo.sh
#   make man          the man pages                  -> build/man/ (glean.conf(5) from config/defaults.c)
#   make install      programs, /etc/glean, systemd units, man pages, ... under
#                     DESTDIR and PREFIX (default /usr/local; see "installing" below)
#   make uninstall    remove what install put there (an edited glean.conf stays)
#   make deps         install every Debian package of scripts/packages.txt
#   make clean        remove build/, build-san/, build-fuzz/
#   V=1               print the full commands
#
# Missing build dependencies (pkg-config modules) are installed on demand by
# scripts/install-deps.sh (as root) before anything is compiled.

.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

GLEAN_VERSION := 0.1.0

all:

# ---- what to build ------------------------------------------------------

# Library modules, listed so that a module comes before the ones it uses
# (the link order). A folder M that exists and holds M/*.c (M/*.bpf.c
# excluded) becomes $(BUILD)/lib/libglean-M.a. PKGS_M are the pkg-config
# modules M needs, LIBS_M plain linker flags. Adding a module: one line.
MODULES := agent sim negotiator queue xfer userlog carve accounting config bpf classad common

PKGS_classad    := libpcre2-8
LIBS_classad    := -lm
PKGS_common     := libsystemd libsodium
PKGS_xfer       := libsodium
PKGS_bpf        := libbpf
PKGS_accounting := sqlite3
PKGS_queue      := sqlite3
PKGS_agent      := libnl-3.0 libnl-route-3.0 libnl-genl-3.0 libcgroup

# Programs: $(BUILD)/bin/P from SRCS_P, linked with every library.
PROGRAMS := glean glean-agent glean-negotiator
SRCS_glean := $(wildcard cli/*.c)
SRCS_glean-agent := $(wildcard agent/daemon/*.c)
SRCS_glean-negotiator := $(wildcard negotiator/daemon/*.c)

# ---- build flavour -------------------------------------------------------

SAN ?= 0
ifeq ($(SAN),1)
BUILD    := build-san
OPTFLAGS := -O1
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD    := build
OPTFLAGS := -O2
SANFLAGS :=
endif

FUZZ_BUILD := build-fuzz
FUZZ_OUT   := build/fuzz
FUZZ_CC    ?= clang
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

PKG_CONFIG ?= pkg-config
AR         ?= ar
WERROR     ?= -Werror
WARNFLAGS  := -Wall -Wextra $(WERROR) -Wshadow -Wformat=2 -Wmissing-prototypes
CSTD       := -std=gnu11

V ?= 0
ifeq ($(V),1)
Q :=
quiet =
else
Q := @
quiet = @printf '  %-6s %s\n' '$(1)' '$(2)';
endif

# ---- derived lists --------------------------------------------------------

# A module's library is its own folder's .c files plus those of the rooms
# SUBDIRS_<module> names (agent/cgroup/, ...); daemon/ and other program
# folders are not listed and stay out of the library.
SUBDIRS_agent := cgroup cron exec policy slots
lib_srcs = $(sort $(filter-out %.bpf.c,$(wildcard $(1)/*.c) \
                     $(foreach d,$(SUBDIRS_$(1)),$(wildcard $(1)/$(d)/*.c))))
objs_of  = $(patsubst %.c,$(2)/obj/%.o,$(1))

LIB_MODULES  := $(foreach m,$(MODULES),$(if $(call lib_srcs,$(m)),$(m)))
LIB_FILES     = $(foreach m,$(LIB_MODULES),$(1)/lib/libglean-$(m).a)
NEED_PKGS    := $(sort $(foreach m,$(LIB_MODULES),$(PKGS_$(m))) cunit)

pkg = $(if $(2),$(shell $(PKG_CONFIG) $(1) $(2) 2>/dev/null))
PKG_CFLAGS   := $(call pkg,--cflags,$(NEED_PKGS))
LIB_LDLIBS   := $(call pkg,--libs,$(foreach m,$(LIB_MODULES),$(PKGS_$(m)))) \
                $(foreach m,$(LIB_MODULES),$(LIBS_$(m)))
CUNIT_LDLIBS := $(call pkg,--libs,cunit)

# Quoted includes only ("classad/classad.h" or "classad.h"), so that a module
# header can never shadow a system header.
CPPFLAGS_ALL := -iquote . $(addprefix -iquote ,$(LIB_MODULES)) -iquote tests/lib \
                $(PKG_CFLAGS) $(CPPFLAGS)
CFLAGS_ALL   := $(CSTD) $(WARNFLAGS) $(OPTFLAGS) -g $(SANFLAGS) $(CFLAGS)
LDFLAGS_ALL  := $(SANFLAGS) $(LDFLAGS)
FUZZ_CFLAGS  := $(CSTD) $(WARNFLAGS) -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(CFLAGS)

PROGRAM_BINS := $(addprefix $(BUILD)/bin/,$(PROGRAMS))

TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TEST_SRCS    := $(sort $(filter-out tests/lib/%,$(wildcard tests/*/test-*.c)))
TEST_BINS    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

BENCH_SRCS   := $(sort $(wildcard bench/*.c))
BENCH_BINS   := $(patsubst bench/%.c,build/bench/%,$(BENCH_SRCS))

FUZZ_SRCS    := $(sort $(wildcard fuzz/*.c))
FUZZ_BINS    := $(patsubst fuzz/%.c,$(FUZZ_OUT)/%,$(FUZZ_SRCS))

# ---- build dependencies (Debian packages) ---------------------------------

# $(BUILD)/.deps-ok.mk records the pkg-config modules found present. It is an
# included makefile: when it is (re)made, make starts over and reads the
# pkg-config flags again, now that the packages are there.
DEPS_STAMP := $(BUILD)/.deps-ok.mk
NODEPS_GOALS := clean help

ifneq ($(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
include $(DEPS_STAMP)
ifneq ($(strip $(DEPS_OK)),$(strip $(NEED_PKGS)))
$(DEPS_STAMP): FORCE
endif
endif

$(DEPS_STAMP): scripts/packages.txt
	$(Q)mkdir -p $(@D)
	$(Q)if ! { command -v $(PKG_CONFIG) >/dev/null 2>&1 && \
	           $(PKG_CONFIG) --exists $(NEED_PKGS) && [ -x "$(BPFTOOL)" ]; }; then \
	        echo "  DEPS   missing build dependencies, running scripts/install-deps.sh"; \
	        sh scripts/install-deps.sh || exit 1; \
	        $(PKG_CONFIG) --print-errors --exists $(NEED_PKGS) || exit 1; \
	fi
	$(Q)echo 'DEPS_OK := $(NEED_PKGS)' >$@

# The fuzz build needs clang and its libFuzzer runtime, which pkg-config does
# not know about: try linking an empty fuzzer once.
FUZZ_STAMP := $(FUZZ_BUILD)/.deps-ok

$(FUZZ_STAMP): scripts/packages.txt
	$(Q)mkdir -p $(@D)
	$(Q)probe='int LLVMFuzzerTestOneInput(const char *d, unsigned long n); \
	           int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void) d; return (int) n * 0; }'; \
	    if ! echo "$$probe" | $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - \
	                -o $(@D)/probe >/dev/null 2>&1; then \
	        echo "  DEPS   $(FUZZ_CC) cannot build a fuzzer, running scripts/install-deps.sh"; \
	        sh scripts/install-deps.sh || exit 1; \
	    fi; \
	    rm -f $(@D)/probe
	$(Q)touch $@

# ---- rules ----------------------------------------------------------------

all: $(PROGRAM_BINS) $(BUILD)/bin/glean-reaper $(call LIB_FILES,$(BUILD))

# The job reaper (agent/reaper/): libc only and static (not under the
# sanitizers, whose runtimes are shared), so that exec'ing it per job is cheap.
REAPER_SRCS := agent/reaper/glean-reaper.c agent/exec/reaper-core.c
$(BUILD)/bin/glean-reaper: $(call objs_of,$(REAPER_SRCS),$(BUILD))
	$(Q)mkdir -p $(@D)
	$(call quiet,LD,$@)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) $(if $(filter 1,$(SAN)),,-static) -o $@ $^

# Objects: $(BUILD)/obj/DIR/FILE.o from DIR/FILE.c, header deps alongside.
$(BUILD)/obj/%.o: %.c
	$(Q)mkdir -p $(@D)
	$(call quiet,CC,$<)$(CC) $(CPPFLAGS_ALL) $(EXTRA_CPPFLAGS) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/obj/cli/%.o: EXTRA_CPPFLAGS := -DGLEAN_VERSION='"$(GLEAN_VERSION)"'

$(FUZZ_BUILD)/obj/%.o: %.c | $(FUZZ_STAMP)
	$(Q)mkdir -p $(@D)
	$(call quiet,CLANG,$<)$(FUZZ_CC) $(CPPFLAGS_ALL) $(FUZZ_CFLAGS) $(FUZZ_EXTRA) -MMD -MP -c $< -o $@

# libFuzzer's entry points have no prototype of their own.
$(FUZZ_BUILD)/obj/fuzz/%.o: FUZZ_EXTRA := -Wno-missing-prototypes

# Static libraries, for the normal/sanitizer build and for the fuzz build.
define lib_rules
$(BUILD)/lib/libglean-$(1).a: $(call objs_of,$(call lib_srcs,$(1)),$(BUILD))
$(FUZZ_BUILD)/lib/libglean-$(1).a: $(call objs_of,$(call lib_srcs,$(1)),$(FUZZ_BUILD))
endef
$(foreach m,$(LIB_MODULES),$(eval $(call lib_rules,$(m))))

# (Two rules: one pattern rule with two targets would be a grouped target.)
define archive
$(Q)mkdir -p $(@D)
$(call quiet,AR,$@)rm -f $@ && $(AR) rcs $@ $^
endef

$(BUILD)/lib/%.a:
	$(archive)

$(FUZZ_BUILD)/lib/%.a:
	$(archive)

# link = objects, then every library as a group, then system libraries.
comma := ,
link = $(1) $(2) -o $@ $(filter %.o,$^) \
       $(if $(filter %.a,$^),-Wl$(comma)--start-group $(filter %.a,$^) -Wl$(comma)--end-group) \
       $(LIB_LDLIBS) $(3)

define program_rule
$(BUILD)/bin/$(1): $(call objs_of,$(SRCS_$(1)),$(BUILD)) $(call LIB_FILES,$(BUILD))
	$$(Q)mkdir -p $$(@D)
	$$(call quiet,LD,$$@)$$(call link,$$(CC),$$(CFLAGS_ALL) $$(LDFLAGS_ALL))
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rule,$(p))))

# Tests: one binary per tests/MODULE/test-NAME.c, with tests/lib and CUnit.
$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(call objs_of,$(TESTLIB_SRCS),$(BUILD)) $(call LIB_FILES,$(BUILD))
	$(Q)mkdir -p $(@D)
	$(call quiet,LD,$@)$(call link,$(CC),$(CFLAGS_ALL) $(LDFLAGS_ALL),$(CUNIT_LDLIBS))

# Benchmarks: standalone programs, always optimised, never sanitized.
build/bench/%: build/obj/bench/%.o $(call LIB_FILES,build)
	$(Q)mkdir -p $(@D)
	$(call quiet,LD,$@)$(call link,$(CC),$(CFLAGS_ALL) $(LDFLAGS_ALL))

# Fuzzers: clang, libFuzzer, ASan, UBSan; libraries rebuilt in build-fuzz/.
$(FUZZ_OUT)/%: $(FUZZ_BUILD)/obj/fuzz/%.o $(call LIB_FILES,$(FUZZ_BUILD))
	$(Q)mkdir -p $(@D)
	$(call quiet,LD,$@)$(call link,$(FUZZ_CC),$(FUZZ_CFLAGS) -fsanitize=fuzzer $(LDFLAGS))

# eBPF programs: bpf/NAME.bpf.c -> build/gen/NAME.bpf.o -> build/gen/NAME.skel.h,
# the skeleton bpf/*.c include. vmlinux.h comes from this machine's BTF
# when it has it (and bpftool), else bpf/vmlinux-fallback.h (the few types
# the programs read; CO-RE relocates them either way). The same for every
# build flavour: one build/gen/.
ifeq ($(origin BPFTOOL),undefined)
BPFTOOL   := $(or $(shell command -v bpftool 2>/dev/null),/usr/sbin/bpftool)
endif
BPF_CLANG ?= clang
BPF_GEN   ?= build/gen
BPF_SRCS  := $(sort $(wildcard bpf/*.bpf.c))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BPF_GEN)/%.skel.h,$(BPF_SRCS))
BPF_ARCH  := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
              -idirafter /usr/include/$(shell $(CC) -print-multiarch 2>/dev/null) -I$(BPF_GEN) -iquote bpf

# BPF_VMLINUX=fallback forces the fallback (to try it: it must build and load too).
$(BPF_GEN)/vmlinux.h: bpf/vmlinux-fallback.h | $(DEPS_STAMP)
	$(Q)mkdir -p $(@D)
	$(Q)if [ "$(BPF_VMLINUX)" != fallback ] && [ -r /sys/kernel/btf/vmlinux ] && $(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c >$@.tmp 2>/dev/null; then \
	        printf '  %-6s %s\n' GEN "$@ (this kernel's BTF)"; mv $@.tmp $@; \
	else \
	        printf '  %-6s %s\n' GEN "$@ (bpf/vmlinux-fallback.h: no BTF or bpftool here)"; rm -f $@.tmp; cp $< $@; \
	fi

$(BPF_GEN)/%.bpf.o: bpf/%.bpf.c $(BPF_GEN)/vmlinux.h
	$(call quiet,BPF,$<)$(BPF_CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

$(BPF_GEN)/%.skel.h: $(BPF_GEN)/%.bpf.o
	$(call quiet,SKEL,$@)$(BPFTOOL) gen skeleton $< name glean_$* >$@.tmp && mv $@.tmp $@

# The loaders include the skeletons.
$(BUILD)/obj/bpf/%.o: EXTRA_CPPFLAGS := -isystem $(BPF_GEN)
$(FUZZ_BUILD)/obj/bpf/%.o: FUZZ_EXTRA := -isystem $(BPF_GEN)
$(call objs_of,$(call lib_srcs,bpf),$(BUILD)) $(call objs_of,$(call lib_srcs,bpf),$(FUZZ_BUILD)): $(BPF_SKELS)

# Keep objects of pattern-built binaries.
.SECONDARY:

# ---- man pages, the default glean.conf, installing --------------------------

# glean-defaults prints the one table of defaults (config/defaults.c, through
# config_new()): glean.conf(5) and the commented /etc/glean/glean.conf are
# made from it, so that neither can drift from what the programs use.
DEFAULTS_TOOL := $(BUILD)/tools/glean-defaults
MAN_PAGES := $(BUILD)/man/glean.1 $(BUILD)/man/glean-agent.8 $(BUILD)/man/glean-negotiator.8 \
             $(BUILD)/man/glean.conf.5
DEFAULT_CONF := $(BUILD)/etc/glean.conf

$(DEFAULTS_TOOL): $(BUILD)/obj/man/glean-defaults.o $(call LIB_FILES,$(BUILD))
	$(Q)mkdir -p $(@D)
	$(call quiet,LD,$@)$(call link,$(CC),$(CFLAGS_ALL) $(LDFLAGS_ALL))

man_subst = sed -e 's|@VERSION@|$(GLEAN_VERSION)|g'

$(BUILD)/man/%: man/%.in
	$(Q)mkdir -p $(@D)
	$(call quiet,GEN,$@)$(man_subst) $< >$@

# The line @DEFAULTS@ of the page becomes one entry per knob, @METAKNOBS@ one per metaknob.
$(BUILD)/man/glean.conf.5: man/glean.conf.5.in $(DEFAULTS_TOOL)
	$(Q)mkdir -p $(@D)
	$(call quiet,GEN,$@)$(DEFAULTS_TOOL) --man >$@.defaults && \
	    $(DEFAULTS_TOOL) --metaknobs >$@.metaknobs && \
	    $(man_subst) $< | awk -v f=$@.defaults -v m=$@.metaknobs \
	        '$$0 == "@DEFAULTS@" { while ((getline l <f) > 0) print l; next } \
	         $$0 == "@METAKNOBS@" { while ((getline l <m) > 0) print l; next } { print }' >$@ && \
	    rm -f $@.defaults $@.metaknobs

$(DEFAULT_CONF): $(DEFAULTS_TOOL)
	$(Q)mkdir -p $(@D)
	$(call quiet,GEN,$@)$(DEFAULTS_TOOL) --conf >$@

man: $(MAN_PAGES) $(DEFAULT_CONF)

# Where install puts things. The programs read /etc/glean (glean.conf,
# config.d/, pool.key) whatever PREFIX is. Every directory below PREFIX is
# one that systemd, man and bash-completion search for PREFIX=/usr/local as
# for PREFIX=/usr (packagers: PREFIX=/usr, or SYSTEMD_UNITDIR=$(pkg-config
# --variable=systemdsystemunitdir systemd)). DESTDIR: a staging root.
PREFIX          ?= /usr/local
BINDIR          ?= $(PREFIX)/bin
SBINDIR         ?= $(PREFIX)/sbin
LIBEXECDIR      ?= $(PREFIX)/libexec/glean
MANDIR          ?= $(PREFIX)/share/man
DOCDIR          ?= $(PREFIX)/share/doc/glean
BASHCOMPDIR     ?= $(PREFIX)/share/bash-completion/completions
SYSTEMD_UNITDIR ?= $(PREFIX)/lib/systemd/system
CATALOGDIR      ?= $(PREFIX)/lib/systemd/catalog
TMPFILESDIR     ?= $(PREFIX)/lib/tmpfiles.d
SYSUSERSDIR     ?= $(PREFIX)/lib/sysusers.d
CONFDIR         := /etc/glean
INSTALL         ?= install

UNITS := glean-agent.service glean-negotiator.service
DOCS  := README.md $(wildcard docs/*.md)
# Every file install makes (below DESTDIR), for uninstall.
INSTALLED := $(BINDIR)/glean $(BINDIR)/condor_config_val $(SBINDIR)/glean-agent $(SBINDIR)/glean-negotiator $(LIBEXECDIR)/glean-reaper \
             $(addprefix $(SYSTEMD_UNITDIR)/,$(UNITS)) $(CATALOGDIR)/glean.catalog \
             $(TMPFILESDIR)/glean.conf $(SYSUSERSDIR)/glean.conf $(BASHCOMPDIR)/glean \
             $(MANDIR)/man1/glean.1 $(MANDIR)/man8/glean-agent.8 $(MANDIR)/man8/glean-negotiator.8 \
             $(MANDIR)/man5/glean.conf.5 $(addprefix $(DOCDIR)/,$(notdir $(DOCS)))

unit_subst = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
                 -e 's|@CONFDIR@|$(CONFDIR)|g'

# Without DESTDIR, on a machine run by systemd: the user, the directories,
# the catalog and the units take effect at once.
install: all man
	$(Q)d='$(DESTDIR)'; set -e; \
	$(INSTALL) -d $$d$(BINDIR) $$d$(SBINDIR) $$d$(SYSTEMD_UNITDIR) $$d$(CATALOGDIR) $$d$(TMPFILESDIR) \
	    $$d$(SYSUSERSDIR) $$d$(BASHCOMPDIR) $$d$(MANDIR)/man1 $$d$(MANDIR)/man5 $$d$(MANDIR)/man8 $$d$(DOCDIR); \
	$(INSTALL) -d -m 0755 $$d$(CONFDIR) $$d$(CONFDIR)/config.d; \
	$(INSTALL) -m 0755 $(BUILD)/bin/glean $$d$(BINDIR)/glean; \
	ln -sf glean $$d$(BINDIR)/condor_config_val; \
	$(INSTALL) -m 0755 $(BUILD)/bin/glean-agent $(BUILD)/bin/glean-negotiator $$d$(SBINDIR)/; \
	$(INSTALL) -d $$d$(LIBEXECDIR); \
	$(INSTALL) -m 0755 $(BUILD)/bin/glean-reaper $$d$(LIBEXECDIR)/glean-reaper; \
	for u in $(UNITS); do $(unit_subst) systemd/$$u.in >$$d$(SYSTEMD_UNITDIR)/$$u; \
	    chmod 0644 $$d$(SYSTEMD_UNITDIR)/$$u; done; \
	$(INSTALL) -m 0644 systemd/glean.catalog $$d$(CATALOGDIR)/glean.catalog; \
	$(INSTALL) -m 0644 systemd/glean.tmpfiles $$d$(TMPFILESDIR)/glean.conf; \
	$(INSTALL) -m 0644 systemd/glean.sysusers $$d$(SYSUSERSDIR)/glean.conf; \
	$(INSTALL) -m 0644 completion/glean $$d$(BASHCOMPDIR)/glean; \
	$(INSTALL) -m 0644 $(BUILD)/man/glean.1 $$d$(MANDIR)/man1/; \
	$(INSTALL) -m 0644 $(BUILD)/man/glean.conf.5 $$d$(MANDIR)/man5/; \
	$(INSTALL) -m 0644 $(BUILD)/man/glean-agent.8 $(BUILD)/man/glean-negotiator.8 $$d$(MANDIR)/man8/; \
	$(INSTALL) -m 0644 $(DOCS) $$d$(DOCDIR)/; \
	if [ -e $$d$(CONFDIR)/glean.conf ]; then \
	    echo "  KEEP   $$d$(CONFDIR)/glean.conf (present; the defaults: glean.conf(5))"; \
	else $(INSTALL) -m 0644 $(DEFAULT_CONF) $$d$(CONFDIR)/glean.conf; fi; \
	echo "  INST   glean under $${d:-/}, PREFIX=$(PREFIX)"; \
	if [ -z "$$d" ] && [ -d /run/systemd/system ]; then \
	    systemd-sysusers $(SYSUSERSDIR)/glean.conf; \
	    systemd-tmpfiles --create $(TMPFILESDIR)/glean.conf; \
	    journalctl --update-catalog; \
	    systemctl daemon-reload; \
	    echo "  next: glean pool-key --new (then copy $(CONFDIR)/pool.key to every machine),"; \
	    echo "        systemctl enable --now glean-negotiator glean-agent (see docs/operations.md)"; \
	fi

# The default glean.conf goes only when unchanged; the user glean, pool.key,
# /var/lib/glean and /run/glean stay (data and identity, not program files).
uninstall: $(DEFAULT_CONF)
	$(Q)d='$(DESTDIR)'; \
	rm -f $(addprefix $$d,$(INSTALLED)); \
	if [ -f $$d$(CONFDIR)/glean.conf ]; then \
	    if cmp -s $(DEFAULT_CONF) $$d$(CONFDIR)/glean.conf; then rm -f $$d$(CONFDIR)/glean.conf; \
	    else echo "  KEEP   $$d$(CONFDIR)/glean.conf (edited)"; fi; \
	fi; \
	rmdir $$d$(DOCDIR) $$d$(LIBEXECDIR) $$d$(CONFDIR)/config.d $$d$(CONFDIR) 2>/dev/null; \
	echo "  UNINST glean under $${d:-/}, PREFIX=$(PREFIX)"; \
	if [ -z "$$d" ] && [ -d /run/systemd/system ]; then \
	    journalctl --update-catalog; systemctl daemon-reload; \
	fi; true

# ---- phony targets --------------------------------------------------------

# Run with the sanitizers' strictest useful settings (ignored without SAN=1).
TEST_ENV := GLEAN=$(BUILD)/bin/glean GLEAN_AGENT=$(BUILD)/bin/glean-agent \
            GLEAN_REAPER=$(abspath $(BUILD)/bin/glean-reaper) \
            GLEAN_NEGOTIATOR=$(BUILD)/bin/glean-negotiator \
            ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# make check: the suites on this machine, then those that need a real
# kernel in the VM rig (check-vm, below); both always run, either failing
# fails it. check-host is the first half alone.
check: all $(TEST_BINS)
	$(Q)status=0; \
	$(TEST_ENV) sh scripts/run-tests.sh $(TEST_BINS) || status=1; \
	echo; echo "=== the suites that need a real kernel, in the VM rig (make check-vm)"; \
	$(TEST_ENV) bash tests/vm/check-vm.sh $(BUILD) || status=1; \
	echo; echo "=== glean installed and run under systemd, in the VM rig (make check-systemd)"; \
	$(MAKE) --no-print-directory check-systemd || status=1; \
	exit $$status

check-host: all $(TEST_BINS)
	$(Q)$(TEST_ENV) sh scripts/run-tests.sh $(TEST_BINS)

check-san:
	$(Q)$(MAKE) --no-print-directory check SAN=1

# The tests that need a real kernel (full cgroup v2, kprobes, fentry, uinput)
# run in a qemu VM with a stock Debian kernel: tests/vm/tests.txt names them
# (build/ read as $(BUILD)/), those with a source are built here. `make
# check` runs it too; it skips loudly, exit 0, where the rig cannot be had.
VM_TEST_BINS := $(filter $(patsubst build/%,$(BUILD)/%,$(shell grep -o '^build/[^[:space:]]*' tests/vm/tests.txt)),$(TEST_BINS))

check-vm: all $(VM_TEST_BINS)
	$(Q)$(TEST_ENV) bash tests/vm/check-vm.sh $(BUILD)

# glean installed (make install into a staging DESTDIR, copied over the
# guest's root) and run under systemd in the VM rig: the units, the user
# glean, a user's job in the agent's delegated cgroups, the journal,
# reload, restart, the watchdog (tests/vm/systemd-test.sh). `make check`
# runs it after check-vm; it skips loudly, exit 0, where the rig cannot be had.
SYSTEMD_STAGE := build/vm/install-$(BUILD)

check-systemd: all man
	$(Q)rm -rf $(SYSTEMD_STAGE) && \
	$(MAKE) --no-print-directory -s install DESTDIR=$(CURDIR)/$(SYSTEMD_STAGE) >/dev/null
	$(Q)$(TEST_ENV) bash tests/vm/check-systemd.sh $(BUILD) $(SYSTEMD_STAGE)

ifeq ($(SAN),1)
bench bench-run:
	$(error benchmarks are built without sanitizers: run 'make $@' without SAN=1)
else
bench: $(BENCH_BINS)

# Each bench/run-*.sh builds what it needs and prints its figures.
bench-run: $(BENCH_BINS)
	$(Q)for s in $(wildcard bench/run-*.sh); do echo "== $$s"; NO_MAKE=1 bash $$s || exit 1; done
endif

fuzz: $(FUZZ_BINS)

demo:
	$(Q)sh scripts/install-deps.sh
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash scripts/demo.sh $(BUILD)/bin/glean

deps:
	$(Q)sh scripts/install-deps.sh

clean:
	$(call quiet,CLEAN,build build-san build-fuzz)rm -rf build build-san build-fuzz

help:
	@sed -n '3,25p' Makefile | sed 's/^# \{0,1\}//'

FORCE:

.PHONY: all check check-host check-san check-vm check-systemd bench bench-run fuzz demo deps clean help FORCE \
        man install uninstall

-include $(shell find $(BUILD)/obj $(FUZZ_BUILD)/obj $(BPF_GEN) -name '*.d' 2>/dev/null)
