//! PLACEHOLDER — being written now; replaced before commit.
use serde::{Deserialize, Serialize};
use super::*;
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThermalParams {}
pub struct ThermalJob { hm: Heightmap, maps: ErosionMaps }
impl ThermalJob {
    pub fn new(terrain: Heightmap, _p: ThermalParams, _i: JobInputs) -> Result<Self, JobError> {
        let n = terrain.len();
        Ok(Self { hm: terrain, maps: ErosionMaps::new(n) })
    }
}
impl Simulation for ThermalJob {
    fn step(&mut self) {}
    fn progress(&self) -> Progress { Progress::default() }
    fn heightmap(&self) -> &Heightmap { &self.hm }
    fn ledger(&self) -> Ledger { Ledger::default() }
    fn maps(&self) -> &ErosionMaps { &self.maps }
    fn fields(&self) -> Fields { Fields::default() }
    fn edit_terrain(&mut self, f: &mut dyn FnMut(&mut Heightmap)) { f(&mut self.hm) }
}
