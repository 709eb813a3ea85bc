/* shard.c - the shards' locks: see shard.h */
#include "shard.h"

bool kp_intern_shared;
_Thread_local struct kp_shard *kp_shard_held;

/* sh's lock, held by the other thread when kp_shard_lock tried it. */
void
kp_shard_wait(struct kp_shard *sh)
{
	do
		kp_spin_wait(&sh->lock);
	while (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE));
}

void
kp_intern_release(void)
{
	if (kp_shard_held)
		__atomic_store_n(&kp_shard_held->lock, 0, __ATOMIC_RELEASE);
	kp_shard_held = NULL;
}
