import { useState, type CSSProperties } from "react";
import { useHydrated } from "./lib/hydrated";

// ThemeForm is the studio's Theme form (issue 42 item 1). Without
// JavaScript it is a plain POST with a Preview button (a GET of the preview
// page, which wears the proposed theme); with it, the sample beside the
// fields follows every change and shows each colour's contrast as the
// server will check it (WCAG 2.2 AA, 4.5:1 on the background and on the
// primary's tint).

export type ThemeValues = { primaryColor: string; accentColor: string; scheme: string; font: string; corners: string };
export type ThemeFontOption = { key: string; label: string; family?: string; stack: string };

const LIGHT_BG = "#ffffff";
const DARK_BG = "#111827";
const TINT = 0.12;

function rgb(hex: string): [number, number, number] | null {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) return null;
  let h = m[1];
  if (h.length === 3) h = h.split("").map((c) => c + c).join("");
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

function hex(c: number[]): string {
  return "#" + c.map((v) => Math.max(0, Math.min(255, Math.round(v))).toString(16).padStart(2, "0")).join("");
}

function luminance(c: number[]): number {
  const ch = c.map((v) => {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}

function ratio(a: number[], b: number[]): number {
  let la = luminance(a), lb = luminance(b);
  if (la < lb) [la, lb] = [lb, la];
  return (la + 0.05) / (lb + 0.05);
}

function mix(a: number[], b: number[], share: number): number[] {
  return a.map((v, i) => Math.round(v * share + b[i] * (1 - share)));
}

// checkedRatio is the ratio store.CheckTheme reports: on the background,
// or (the primary only) on its tint when it passes on the background.
export function checkedRatio(color: string, bg: string, tint: boolean): number | null {
  const c = rgb(color), b = rgb(bg)!;
  if (!c) return null;
  const onBg = ratio(c, b);
  if (onBg < 4.5 || !tint) return onBg;
  const onTint = ratio(c, mix(c, b, TINT));
  return onTint < 4.5 ? onTint : onBg;
}

export default function ThemeForm(props: {
  action: string;
  previewAction: string;
  theme: ThemeValues;
  fonts: ThemeFontOption[];
  fields: Record<string, string>;
}) {
  const hydrated = useHydrated();
  const [t, setT] = useState<ThemeValues>(props.theme);
  const set = (k: keyof ThemeValues) => (e: { target: { value: string } }) => setT({ ...t, [k]: e.target.value });
  const dark = t.scheme === "dark";
  const bg = dark ? DARK_BG : LIGHT_BG;
  const font = props.fonts.find((f) => f.key === t.font) ?? props.fonts[0];
  const sample = {
    "--accent": t.primaryColor, "--accent-fg": bg, "--accent2": t.accentColor, "--bg": bg,
    "--fg": dark ? "#f9fafb" : "#111827", "--muted": dark ? "#9ca3af" : "#4b5563", "--line": dark ? "#374151" : "#e5e7eb",
    "--radius": t.corners === "square" ? "2px" : "12px", "--pill": t.corners === "square" ? "2px" : "999px",
    "--accent-tint2": rgb(t.primaryColor) ? hex(mix(rgb(t.primaryColor)!, rgb(bg)!, TINT)) : undefined,
    fontFamily: font.stack,
  } as CSSProperties;
  const field = (name: string) => "field" + (props.fields[name] ? " has-error" : "");
  const contrast = (name: "primaryColor" | "accentColor") => {
    if (!hydrated) return null;
    const r = checkedRatio(t[name], bg, name === "primaryColor");
    if (r === null) return <span className="hint">Use a hex colour such as #0b6e4f.</span>;
    const ok = r >= 4.5;
    return (
      <span className={"hint contrast " + (ok ? "contrast-ok" : "contrast-bad")} data-contrast={r.toFixed(2)}>
        {"Contrast " + (Math.floor(r * 100) / 100).toFixed(2) + ":1 " + (ok ? "passes" : "is below 4.5:1 and will be refused")}
      </span>
    );
  };
  const color = (name: "primaryColor" | "accentColor", label: string, hint: string) => (
    <div className={field(name)}>
      <label htmlFor={"theme-" + name}>{label}</label>
      <div className="color-row">
        {hydrated && (
          <input type="color" aria-label={label + " picker"} value={rgb(t[name]) ? hex(rgb(t[name])!) : "#000000"} onChange={set(name)} />
        )}
        <input id={"theme-" + name} name={name} value={t[name]} onChange={set(name)} pattern="#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})"
          maxLength={7} spellCheck={false} autoComplete="off" required />
      </div>
      <span className="hint">{hint}</span>
      {contrast(name)}
      {props.fields[name] && <p className="field-error">{props.fields[name]}</p>}
    </div>
  );
  return (
    <div className="theme-editor" data-hydrated={hydrated || undefined}>
      <form method="post" action={props.action} className="studio-form theme-form">
        {color("primaryColor", "Primary colour", "Buttons and links; button text is the background colour.")}
        {color("accentColor", "Accent colour", "What is current: the footer's active tab, \"View all\" links.")}
        <div className={field("scheme")}>
          <label htmlFor="theme-scheme">Background</label>
          <select id="theme-scheme" name="scheme" value={t.scheme} onChange={set("scheme")}>
            <option value="light">Light</option>
            <option value="dark">Dark</option>
            <option value="auto">Follow the device (light or dark)</option>
          </select>
          {props.fields.scheme && <p className="field-error">{props.fields.scheme}</p>}
        </div>
        <div className={field("font")}>
          <label htmlFor="theme-font">Font</label>
          <select id="theme-font" name="font" value={t.font} onChange={set("font")}>
            {props.fonts.map((f) => <option key={f.key} value={f.key}>{f.label}</option>)}
          </select>
          {props.fields.font && <p className="field-error">{props.fields.font}</p>}
        </div>
        <div className={field("corners")}>
          <label htmlFor="theme-corners">Corners</label>
          <select id="theme-corners" name="corners" value={t.corners} onChange={set("corners")}>
            <option value="rounded">Rounded</option>
            <option value="square">Square</option>
          </select>
          {props.fields.corners && <p className="field-error">{props.fields.corners}</p>}
        </div>
        <div className="actions">
          <button type="submit" className="button">Save theme</button>{" "}
          <button type="submit" className="button button-secondary" formAction={props.previewAction} formMethod="get" formNoValidate>
            Preview
          </button>
        </div>
      </form>
      <div className="theme-sample" style={sample} aria-label="Theme sample" role="group">
        <p className="theme-sample-title">Your app</p>
        <p>Text on the background, with <a href="#theme-primaryColor">a link</a>.</p>
        <p>
          <span className="button">Primary button</span> <span className="chip selected">Chip</span>{" "}
          <span className="badge">Badge</span>
        </p>
        <p className="theme-sample-accent">Accent: View all</p>
      </div>
    </div>
  );
}
