export interface BackButtonProps {
  fallback: string;
  label?: string;
}

// BackButton goes back in history when the visitor came from this site, and
// otherwise (or without JavaScript) follows the link to the fallback page.
export default function BackButton({ fallback, label = "Back" }: BackButtonProps) {
  function onClick(e: React.MouseEvent) {
    let sameSite = false;
    try {
      sameSite = document.referrer !== "" && new URL(document.referrer).origin === window.location.origin;
    } catch {}
    if (sameSite && window.history.length > 1) {
      e.preventDefault();
      window.history.back();
    }
  }
  return (
    <a className="back-button" href={fallback} onClick={onClick}>
      <span aria-hidden="true">←</span> {label}
    </a>
  );
}
