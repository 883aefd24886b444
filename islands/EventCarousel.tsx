import { useState } from "react";
import { FULL_WIDTH, Img } from "../pages/lib/img";
import type { MediaView } from "../pages/lib/types";

export interface EventCarouselProps {
  media: MediaView[]; // banner first, then newest first (carouselMedia)
  name: string;
}

// EventCarousel shows one picture at a time with prev/next that wrap, a
// counter and thumbnails. Without JavaScript the first picture shows and the
// thumbnails link to the files.
export default function EventCarousel({ media, name }: EventCarouselProps) {
  const [i, setI] = useState(0);
  if (media.length === 0) return null;
  const m = media[i];
  const go = (d: number) => setI((i + d + media.length) % media.length);
  return (
    <div className="carousel">
      <div className="carousel-stage">
        {m.type === "VIDEO" ? (
          <video src={m.signedUrl} controls playsInline preload="metadata" />
        ) : (
          // The banner comes first: the event page's largest first paint.
          <Img key={m.id} media={m} alt={m.description || name} sizes={FULL_WIDTH} box={[800, 450]} priority={i === 0} />
        )}
        {media.length > 1 && (
          <>
            <button type="button" className="carousel-prev" aria-label="Previous picture" onClick={() => go(-1)}>
              ‹
            </button>
            <button type="button" className="carousel-next" aria-label="Next picture" onClick={() => go(1)}>
              ›
            </button>
            <span className="carousel-counter">
              {i + 1} / {media.length}
            </span>
          </>
        )}
      </div>
      {media.length > 1 && (
        <ul className="carousel-thumbs">
          {media.map((t, n) => (
            <li key={t.id}>
              <a
                href={t.signedUrl}
                aria-current={n === i ? "true" : undefined}
                aria-label={"Show " + (t.type === "VIDEO" ? "video" : "image") + " " + (n + 1) + " of " + media.length}
                onClick={(e) => {
                  e.preventDefault();
                  setI(n);
                }}
              >
                {t.type === "VIDEO" ? <span className="thumb-video">▶</span> : <Img media={t} alt="" sizes="64px" box={[64, 48]} />}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
