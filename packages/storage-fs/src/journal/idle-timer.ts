/** A timer that fires once nothing touched it for a whole period. */
export interface IdleTimer {
  /** Marks activity now (arms the timer if it is not armed). */
  touch(): void;
}

/**
 * Calls `onIdle` once a whole `periodMs` passed with no `touch()` and `busy()` false, so between
 * one and two periods after the last touch. One timer, re-armed each period, rather than one set
 * and cleared per touch (a touch comes with every batch of puts). Never keeps a process alive.
 */
export function createIdleTimer(periodMs: number, busy: () => boolean, onIdle: () => void): IdleTimer {
  let timer: NodeJS.Timeout | undefined;
  let touchedSinceCheck = false;
  function arm(): void {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (busy() || touchedSinceCheck) {
        touchedSinceCheck = false;
        arm();
      } else {
        onIdle();
      }
    }, periodMs);
    timer.unref();
  }
  return {
    touch() {
      touchedSinceCheck = true;
      arm();
    },
  };
}
