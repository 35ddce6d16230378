"""``python -m explorer.core.compiled``: compile the kernel into its cache (or load it), and say which."""

import time

from explorer.core.compiled import cache_dir, evaluate
from explorer.streams import generate


def main() -> None:
    cached = any(cache_dir().rglob("*.nbi"))
    start = time.perf_counter()
    evaluate(generate("voltsp", scenario=3), __import__("explorer.config", fromlist=["preset"]).preset("voltsp"))
    verb = "loaded from" if cached else "compiled into"
    print(f"kernel {verb} {cache_dir()} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
