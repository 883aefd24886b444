import type { StudioData } from "../lib/types";

// FieldError is the message beside a field the server refused.
export function FieldError({ d, name }: { d: StudioData; name: string }) {
  return d.fields[name] ? <p className="field-error">{d.fields[name]}</p> : null;
}

// cls is a field's class: marked when the server refused it.
export function cls(d: StudioData, name: string): string {
  return "field" + (d.fields[name] ? " has-error" : "");
}
