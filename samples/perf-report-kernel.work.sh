#!/bin/sh
# kernel-heavy: small-block syscalls, pipes, file reads, fork/exec
dd if=/dev/zero of=/dev/null bs=64 count=600000 2>/dev/null &
dd if=/dev/urandom bs=4k count=3000 2>/dev/null | gzip -1 > /dev/null &
find /usr/share /usr/lib -xdev -type f 2>/dev/null | head -6000 | xargs cat > /dev/null 2>&1
i=0; while [ $i -lt 100 ]; do /bin/true; i=$((i+1)); done
wait
sleep 0.1  # some idle time too
