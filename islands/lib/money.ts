// Money as the donation modal reads it (SPEC.md section 5): the typed
// dollars times 100, rounded to cents; anything not above 0 is null.
export function dollarsToCents(text: string): number | null {
  const v = text.trim().replace(/^\$/, "");
  if (v === "") return null;
  const n = Number(v);
  if (!isFinite(n)) return null;
  const cents = Math.round(n * 100);
  return cents > 0 ? cents : null;
}

export function dollars(cents: number): string {
  return "$" + (cents % 100 === 0 ? String(cents / 100) : (cents / 100).toFixed(2));
}
