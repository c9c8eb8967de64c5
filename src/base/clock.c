/* The monotonic clock (include/ibsnmpd/clock.h). */
#include "ibsnmpd/clock.h"

static struct timespec now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

double monotonic_seconds(void)
{
	struct timespec t = now();

	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

time_t monotonic_whole_seconds(void)
{
	return now().tv_sec;
}

long long monotonic_ms(void)
{
	struct timespec t = now();

	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
