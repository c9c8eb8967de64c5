/* The one clock of ibsnmpd's durations and "how long ago": CLOCK_MONOTONIC
 * (base/clock.c). Wall time (time(), CLOCK_REALTIME) is only for what a
 * manager reads as a date. */
#ifndef IBSNMPD_CLOCK_H
#define IBSNMPD_CLOCK_H

#include <time.h>

/* Monotonic seconds, to the nanosecond (durations, gaps under a second). */
double monotonic_seconds(void);
/* The same clock in whole seconds (snapshots' filled_at, alarms' ages). */
time_t monotonic_whole_seconds(void);
/* The same clock in milliseconds (rate limits). */
long long monotonic_ms(void);

#endif
