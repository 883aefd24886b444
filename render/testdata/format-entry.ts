// Exposes the shared format helpers so a Go test can run them under goja.
import * as format from "../../pages/lib/format";
import * as changes from "../../pages/lib/changes";

(globalThis as any).format = format;
(globalThis as any).changes = changes;
