/**
 * `work`, or the error of `expired()` once `ms` have passed, whichever comes first. The work is not
 * stopped (a query or a runtime call goes on in the background); its timer is cleared either way.
 */
export async function raceDeadline<T>(work: Promise<T>, ms: number, expired: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(expired()), Math.max(0, ms));
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
