// Exposes the shared format helpers so a Go test can run them under goja.
import * as format from "../../pages/lib/format";

(globalThis as any).format = format;
