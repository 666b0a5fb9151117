// Inline SVG icons (no emoji font needed: headless and minimal Linux browsers render them too).
const PATHS: Record<string, string> = {
  chat: "M4 5h16v10H8l-4 4z",
  book: "M5 4h10a3 3 0 0 1 3 3v13H8a3 3 0 0 1-3-3zM5 17a3 3 0 0 1 3-3h10",
  apps: "M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z",
  key: "M14 10a4 4 0 1 0-3.5 4L9 15.5V18H6.5V20.5H4V18l6.5-6.5M15.5 8.5h.01",
  file: "M6 3h8l4 4v14H6zM14 3v4h4",
  link: "M10 14a4 4 0 0 0 6 0l3-3a4 4 0 0 0-6-6l-1 1M14 10a4 4 0 0 0-6 0l-3 3a4 4 0 0 0 6 6l1-1",
  text: "M5 6h14M5 10h14M5 14h10M5 18h7",
  tool: "M14 6a4 4 0 0 0 5 5l-8 8a2 2 0 0 1-3-3l8-8a4 4 0 0 0-2-2z",
  user: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
  bot: "M5 8h14v11H5zM12 8V4M9 13h.01M15 13h.01",
  play: "M7 4l13 8-13 8z",
  flow: "M6 4v6a4 4 0 0 0 4 4h4M6 20v-6M18 14l-4-4v8z",
  upload: "M12 16V4M6 10l6-6 6 6M4 20h16",
  menu: "M4 6h16M4 12h16M4 18h16",
  up: "M7 11v9H4v-9zM7 11l4-7a2 2 0 0 1 3 2l-1 4h6a2 2 0 0 1 2 2l-2 7a2 2 0 0 1-2 1H7",
  down: "M7 13V4H4v9zM7 13l4 7a2 2 0 0 0 3-2l-1-4h6a2 2 0 0 0 2-2l-2-7a2 2 0 0 0-2-1H7",
};

export function Icon({ name, size = 16 }: { name: string; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth={1.8} strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" style={{ flexShrink: 0, verticalAlign: "-3px" }}>
      <path d={PATHS[name] ?? PATHS.apps} />
    </svg>
  );
}
