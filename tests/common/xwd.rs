//! A picture of a whole X screen, for the tests whose window is not Talus's own (a message box):
//! `xwd -root` (Debian: x11-apps) dumps the screen, and [`root_png`] reads its ZPixmap with the
//! header's masks and writes a PNG with the `image` crate.

use std::path::Path;
use std::process::Command;

/// Whether `program` is on PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// Saves the root window of `display` as the PNG `out`. `Err` when `xwd` is missing or fails.
pub fn root_png(display: &str, out: &Path) -> Result<image::RgbImage, String> {
    let dump = Command::new("xwd")
        .args(["-root", "-silent", "-display", display])
        .output()
        .map_err(|e| format!("xwd: {e} (Debian: x11-apps)"))?;
    if !dump.status.success() {
        return Err(format!("xwd: {}", String::from_utf8_lossy(&dump.stderr)));
    }
    let img = decode(&dump.stdout)?;
    img.save(out).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(img)
}

/// Decodes an XWD file of a TrueColor ZPixmap (24 or 32 bits a pixel, either byte order).
pub fn decode(d: &[u8]) -> Result<image::RgbImage, String> {
    let field = |i: usize| -> Result<u32, String> {
        d.get(i * 4..i * 4 + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| "xwd: short header".to_string())
    };
    let (header, format, w, h) = (field(0)? as usize, field(2)?, field(4)?, field(5)?);
    let (byte_order, bpp, stride) = (field(7)?, field(11)? as usize, field(12)? as usize);
    let masks = [field(15)?, field(16)?, field(17)?];
    let ncolors = field(19)? as usize;
    if format != 2 || !(bpp == 24 || bpp == 32) || masks.contains(&0) {
        return Err(format!("xwd: format {format}, {bpp} bits a pixel: not a TrueColor ZPixmap"));
    }
    let data = d.get(header + ncolors * 12..).ok_or("xwd: no pixels")?;
    if data.len() < stride * h as usize {
        return Err("xwd: truncated pixels".into());
    }
    let bytes = bpp / 8;
    let mut img = image::RgbImage::new(w, h);
    for (y, row) in data.chunks(stride).take(h as usize).enumerate() {
        for x in 0..w as usize {
            let px = &row[x * bytes..x * bytes + bytes];
            let mut v = 0u32;
            for (k, b) in px.iter().enumerate() {
                // byte_order 0: least significant byte first.
                let shift = if byte_order == 0 { k } else { bytes - 1 - k };
                v |= (*b as u32) << (8 * shift);
            }
            let c = masks.map(|m| (((v & m) >> m.trailing_zeros()) * 255 / (m >> m.trailing_zeros())) as u8);
            img.put_pixel(x as u32, y as u32, image::Rgb(c));
        }
    }
    Ok(img)
}
