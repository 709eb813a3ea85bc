#!/usr/bin/env bash
# kp-fold's naming options for the converters' output, on our own fixtures
# (no corpus needed): --modules, --jit, --inlined, --all, --perf-addrs,
# --backtick, and the [module file name] fallback.
# The C++ name keeps its template argument list with parentheses in it, as
# inferno-collapse-perf prints it (stackcollapse-perf.pl cut it at the "(").
set -u
fail=0
T=$KP_TOP/tests
check() { # name folded-output expected-line
	if grep -qxF -- "$3" <<< "$2"; then echo "ok: $1"; else
		echo "FAILED: $1: no line '$3' in:"; sed 's/^/    /' <<< "$2"; fail=1; fi
}
perf=$(perf2kp "$T/perf2kp/shapes.in" 2> /dev/null)
fold() { kp-fold "$@" <<< "$perf"; }

check "fallback is the module's file name" "$(fold)" \
	"[unknown];[dd];read;nf_hook_slow;finish_task_switch 2"
check "--modules: kernel and kernel-module frames get _[k]" "$(fold --modules)" \
	"[unknown];[dd];read;nf_hook_slow_[k];finish_task_switch_[k] 2"
check "--jit: /tmp/perf-PID.map frames get _[j]" "$(fold --jit)" \
	"net/http.(*Client).Do;StealTask::do_it;Ljava/io/PrintStream:::print_[j] 1"
check "--inlined: inlined frames get _[i]" "$(fold --inlined)" \
	"vmlinux_thing;Ljava/io/BufferedWriter:::flushBuffer;Ljava/io/OutputStreamWriter:::write_[i];main;std::__invoke_impl<int, int (*&)(int, int)> 1"
check "--all: one annotation each, _[i] first" "$(fold --all)" \
	"vmlinux_thing_[k];Ljava/io/BufferedWriter:::flushBuffer_[j];Ljava/io/OutputStreamWriter:::write_[i];main;std::__invoke_impl<int, int (*&)(int, int)> 1"
check "--perf-addrs: [module <addr>] and [unknown <addr>]" "$(fold --perf-addrs)" \
	"[unknown <0>];[dd <55d0e1c4b3a9>];read;nf_hook_slow;finish_task_switch 2"
check "--addrs keeps its 0xADDR form" "$(fold --addrs)" \
	"0x0;0x55d0e1c4b3a9;read;nf_hook_slow;finish_task_switch 2"
f=$(mktemp)
printf '%s\n' '!' ' 0x00007f0000001000 [/tmp/jitted-123-4.so]' '	5' '!' > "$f"
check "--jit: jitdump's jitted-*.so too" "$(kp-fold --jit "$f")" "[jitted-123-4.so]_[j] 5"
check "--modules: perf's [vdso] gets _[k], as stackcollapse-perf.pl" \
	"$(printf '!\n 0x00007fff00001000 [[vdso]]\n\t1\n!\n' | kp-fold --modules)" "[[vdso]]_[k] 1"
rm -f "$f"
dt=$(dtrace2kp "$T/dtrace2kp/shapes.in" 2> /dev/null)
check "--backtick: module\`function and module\`0xADDR" "$(kp-fold --backtick <<< "$dt")" \
	"unix\`0xfffffffffb8001d6;genunix\`vn_rele;genunix\`kmem_cpu_reload 13"
check "--backtick: a bare address stays 0xADDR" "$(kp-fold --backtick <<< "$dt")" \
	"0x104d08831;libjvm.dylib\`TestClass::TestClass2<blargh>;libjvm.dylib\`java_start(Thread*);libjvm.dylib\`JavaCalls::call_helper 3"
check "--backtick --inlined: Java inline chain" "$(kp-fold --backtick --inlined <<< "$dt")" \
	"test\`Lfoo;bar_[i];baz_[i];libc.so.1\`__read;vmlinux\`do_syscall_64;kernel\`amd64_syscall 5"
exit $fail
