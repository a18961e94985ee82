#!/usr/bin/env node
// Whether the addon builds its JPEG decoder (native/src/jpeg.cc) and against which libjpeg:
//   TAILOR_JPEG=0          never (the image-list pipeline then decodes with sharp)
//   TAILOR_JPEG_DIR=/dir   a libjpeg(-turbo) with include/jpeglib.h and lib/libjpeg.so*
//   otherwise              the system's, where jpeglib.h and libjpeg.so are installed
//                          (Debian: libjpeg62-turbo-dev, which scripts/setup.sh installs)
// binding.gyp and scripts/gpu-check.sh call `node resolve-jpeg.mjs defines|cflags|libraries`;
// without a libjpeg every field is empty, and the addon is built without the decoder.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const SYSTEM_INCLUDES = ['/usr/include', '/usr/local/include'];
const SYSTEM_LIBS = [
  '/usr/lib/x86_64-linux-gnu',
  '/usr/lib/aarch64-linux-gnu',
  '/usr/lib64',
  '/usr/lib',
  '/usr/local/lib',
];

/** { include, lib, soname } of the libjpeg to build against, or null. */
export function resolveJpeg(env = process.env) {
  if (env.TAILOR_JPEG === '0') return null;
  if (env.TAILOR_JPEG_DIR) {
    const dir = env.TAILOR_JPEG_DIR;
    const lib = join(dir, 'lib');
    const so = existsSync(lib) ? readdirSync(lib).find((f) => /^libjpeg\.so(\.\d+)*$/.test(f)) : undefined;
    if (!existsSync(join(dir, 'include', 'jpeglib.h')) || !so) return null;
    return { include: join(dir, 'include'), lib, soname: so };
  }
  const include = SYSTEM_INCLUDES.find((d) => existsSync(join(d, 'jpeglib.h')));
  const lib = SYSTEM_LIBS.find((d) => existsSync(join(d, 'libjpeg.so')));
  return include && lib ? { include, lib, soname: 'libjpeg.so' } : null;
}

function field(name, jpeg) {
  if (!jpeg) return '';
  const system = jpeg.soname === 'libjpeg.so';
  switch (name) {
    case 'defines':
      return 'TAILOR_JPEG';
    case 'cflags':
      return `-DTAILOR_JPEG -I${jpeg.include}`;
    case 'include_dirs':
      return jpeg.include;
    case 'libraries':
      return system ? '-ljpeg' : `-L${jpeg.lib} -l:${jpeg.soname} -Wl,-rpath,${jpeg.lib}`;
    default:
      throw new Error(`resolve-jpeg: unknown field '${name}' (defines, cflags, include_dirs, libraries)`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(field(process.argv[2] ?? 'defines', resolveJpeg()));
}
