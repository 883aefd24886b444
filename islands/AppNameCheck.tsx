import { useEffect, useState } from "react";
import { request } from "./lib/api";

// AppNameCheck is the app name input of the Create your app form: it asks
// the server, as the creator types, whether the name follows the rules and
// is free. Without JavaScript the form posts and the server says the same.
export default function AppNameCheck({ value, error }: { value: string; error: string }) {
  const [name, setName] = useState(value);
  const [answer, setAnswer] = useState<{ ok: boolean; text: string } | null>(error ? { ok: false, text: error } : null);

  useEffect(() => {
    if (name === value && error) return;
    if (name.trim() === "") {
      setAnswer(null);
      return;
    }
    const ctl = new AbortController();
    const t = setTimeout(() => {
      request("GET", "/api/apps/availability", { query: { name: name.trim() }, signal: ctl.signal })
        .then(({ data }) => setAnswer({ ok: data.available, text: data.message }))
        .catch(() => {});
    }, 250);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
  }, [name]);

  return (
    <div className={"field" + (answer && !answer.ok ? " has-error" : "")}>
      <label htmlFor="app-name">App name</label>
      <input
        id="app-name"
        name="name"
        required
        minLength={2}
        maxLength={40}
        pattern="[a-z0-9][a-z0-9\-]{1,39}"
        autoComplete="off"
        autoCapitalize="none"
        spellCheck={false}
        value={name}
        onChange={(e) => setName(e.target.value.toLowerCase())}
        aria-describedby="app-name-hint app-name-check"
      />
      <p id="app-name-hint" className="meta">
        Your app's address: /apps/{name || "your-name"}. 2 to 40 lowercase letters, digits or hyphens.
      </p>
      <p id="app-name-check" className={answer ? (answer.ok ? "field-ok" : "field-error") : "meta"} role="status" aria-live="polite">
        {answer ? answer.text : ""}
      </p>
    </div>
  );
}
