// Usage months are calendar months in the service's time zone (TZ), written `YYYY-MM`.

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

export function isMonth(value: string): boolean {
  return MONTH.test(value);
}

/** A `YYYY-MM` formatter for `timeZone` (undefined or '' = the system time zone). Throws for an unknown zone. */
export function monthFormatter(timeZone?: string): (epochMs: number) => string {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: timeZone === '' ? undefined : timeZone, year: 'numeric', month: '2-digit',
  });
  return (epochMs) => {
    let year = '';
    let month = '';
    for (const part of format.formatToParts(epochMs)) {
      if (part.type === 'year') year = part.value;
      else if (part.type === 'month') month = part.value;
    }
    return `${year.padStart(4, '0')}-${month}`;
  };
}

/**
 * The current month, recomputed at most once a second: the hot path counts usage per month and
 * should not format a date per request.
 */
export function createMonthClock(timeZone?: string, now: () => number = Date.now): () => string {
  const format = monthFormatter(timeZone);
  let cached = '';
  let validUntil = 0;
  return () => {
    const t = now();
    if (t >= validUntil || t < validUntil - 1000) {
      cached = format(t);
      validUntil = t + 1000;
    }
    return cached;
  };
}
