// ErrorState shows a failed load with a Retry link that reloads the page,
// which works with or without JavaScript.
export function ErrorState({ message, retryHref }: { message: string; retryHref: string }) {
  return (
    <div className="state state-error" role="alert">
      <p>{message}</p>
      <a className="button" href={retryHref}>
        Retry
      </a>
    </div>
  );
}
