import type { MediaView } from "./types";

// Img is every uploaded image of the pages and islands, so each one gets
// the same care: a width and height (no layout shift while it loads), the
// resized copies in srcset with the layout width in sizes (a phone loads a
// 384 px copy, not a 1200 px original), and lazy loading except for the one
// image that is the first screen's largest paint (priority).
export interface ImgProps {
  media: MediaView;
  alt: string;
  // The width the image is laid out at, as the sizes attribute says it:
  // "72px", or "(max-width: 720px) 100vw, 720px" for a full-width image.
  sizes: string;
  // A fixed box the CSS crops the image into: its size is what width and
  // height declare. Without one they declare the image's own size (the CSS
  // scales it to the column, keeping its shape), or fallback until known.
  box?: [number, number];
  fallback?: [number, number];
  priority?: boolean;
  // eager: loads at once, at its normal priority: a small image always on
  // the first screen that is not its largest paint (the header's title).
  // Lazy there would wait for layout and could become a late LCP.
  eager?: boolean;
  className?: string;
  style?: React.CSSProperties;
  onLoad?: () => void;
  onError?: () => void;
}

export function Img({ media, alt, sizes, box, fallback, priority, eager, className, style, onLoad, onError }: ImgProps) {
  const [width, height] = box ?? (media.width && media.height ? [media.width, media.height] : fallback ?? [undefined, undefined]);
  return (
    <img
      className={className}
      style={style}
      src={media.signedUrl}
      srcSet={media.srcset || undefined}
      sizes={media.srcset ? sizes : undefined}
      alt={alt}
      width={width}
      height={height}
      loading={priority || eager ? "eager" : "lazy"}
      decoding={priority ? undefined : "async"}
      fetchPriority={priority ? "high" : undefined}
      onLoad={onLoad}
      onError={onError}
    />
  );
}

// Layout widths shared by several pages: the page column is at most 720 px.
export const FULL_WIDTH = "(max-width: 720px) 100vw, 720px";
