// The HUD's figures: speed, rpm and gear of the vehicle the camera follows.
// The ego's own messages (FMVM, FMLM, EngineStatus: 100 Hz) when it has a vehicle module;
// otherwise, and for any other vehicle of a world, its WorldPose (20 Hz), which carries the
// same figures: a world of built-in drivers has no vehicle module, and its dials still move.
// No DOM and no three.js here, so it runs (and is tested) anywhere.

// state: the ego's figures from its own messages; vehicles: the world frame's vehicles;
// target: the row the camera follows, or null for the ego.
export function hudFigures(state, vehicles, target) {
  const ownPose = (state.poses || 0) > 0;
  const followed = target === null
    ? (ownPose ? null : vehicles.find((v) => v.ego) || null)
    : vehicles.find((v) => v.row === target) || null;
  if (followed === null) return { speed: state.speed, rpm: state.rpm, gear: state.gear };
  return { speed: followed.speed, rpm: followed.rpm ?? 0, gear: followed.gear ?? null };
}

// R, N, 1-5 from a gear number; the page's own selector until the vehicle says.
export function gearLabel(gear, selector) {
  if (gear === null || gear === undefined) return selector;
  return gear < 0 ? 'R' : gear === 0 ? 'N' : String(gear);
}
