"""The calibrator file the synthesis worker reads: the one shipped with the service (service/calibrator.json)
or the configured `calibrator_path`. Read again when the file changes, so `tg-confidence calibrate` takes
effect without a restart; a missing or corrupt file is reported, never fatal (the run keeps its evidence
score and says why)."""

from __future__ import annotations

from pathlib import Path

from confidence.calibrator import Calibrator, CalibratorError

SHIPPED = Path(__file__).with_name("calibrator.json")


class CalibratorFile:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path).expanduser() if path else SHIPPED
        self._loaded: tuple[float, Calibrator] | None = None

    def current(self) -> Calibrator:
        """The calibrator as the file holds it now; CalibratorError says what is wrong with it."""
        try:
            mtime = self.path.stat().st_mtime
            if self._loaded is not None and self._loaded[0] == mtime:
                return self._loaded[1]
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CalibratorError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        try:
            calibrator = Calibrator.from_json(text)
        except CalibratorError as exc:
            raise CalibratorError(f"{self.path}: {exc}") from None
        self._loaded = (mtime, calibrator)
        return calibrator
