// A tiny history router: the path is the state; links call navigate().
import { useEffect, useState } from "react";

let leaveGuard: (() => boolean) | null = null;

/** While set, in-app navigation asks it first (false stays on the page): the editor's unsaved changes. */
export function setLeaveGuard(guard: (() => boolean) | null): void {
  leaveGuard = guard;
}

export function navigate(path: string): void {
  if (path !== location.pathname + location.search && leaveGuard && !leaveGuard()) return;
  if (path !== location.pathname + location.search) history.pushState(null, "", path);
  window.dispatchEvent(new Event("fathom:navigate"));
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    window.addEventListener("popstate", update);
    window.addEventListener("fathom:navigate", update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener("fathom:navigate", update);
    };
  }, []);
  return path;
}

export function linkProps(path: string) {
  return {
    href: path,
    onClick: (e: React.MouseEvent) => {
      if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      navigate(path);
    },
  };
}
