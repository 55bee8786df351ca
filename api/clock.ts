// Time source for credits, monthly resets and rate limits, injectable so tests can cross a month or a minute at will.

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = {
  now: () => new Date(),
};

/** A clock that only moves when told to. */
export class FixedClock implements Clock {
  private t: number;

  constructor(start: Date | string = '2026-01-15T12:00:00Z') {
    this.t = new Date(start).getTime();
  }

  now(): Date {
    // A fresh Date each time: callers may mutate what they get without moving the clock.
    return new Date(this.t);
  }

  set(d: Date | string): void {
    this.t = new Date(d).getTime();
  }

  advance(ms: number): void {
    this.t += ms;
  }
}
