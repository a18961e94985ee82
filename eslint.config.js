import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';

// The dependency order of src/ (a folder imports only from folders listed before it; folders on
// the same line do not import each other). A new back-edge fails `npx eslint .` and so CI.
const LONGTAIL_LAYERS = [
  ['types', 'metrics'],
  ['data', 'models'],
  ['losses'],
  ['systems'],
  ['train'],
  ['adapt'],
  ['config'],
  ['workflows'],
];
const SYSTEMS = ['longtail', 'mixture', 'nmr'];

function layerZones() {
  const zones = [];
  // src/util holds general helpers (files, errors, RNG, progress): it imports nothing of tailor.
  zones.push({
    target: './src/util',
    from: ['torch', ...SYSTEMS, 'cli', 'report'].map((d) => `./src/${d}`),
    message: 'src/util imports nothing of the tensor library, the systems, the reports or the CLI.',
  });
  // src/torch is the tensor library: nothing of the systems or the commands.
  zones.push({
    target: './src/torch',
    from: [...SYSTEMS, 'cli', 'report'].map((d) => `./src/${d}`),
    message: 'src/torch imports nothing of the systems, the reports or the CLI.',
  });
  // The systems are independent of each other and of the layers on top.
  for (const system of SYSTEMS) {
    zones.push({
      target: `./src/${system}`,
      from: [...SYSTEMS.filter((s) => s !== system), 'cli', 'report'].map((d) => `./src/${d}`),
      message: `src/${system} imports no other system and nothing of the reports or the CLI.`,
    });
  }
  // The reports sit below the CLI; both use each system through its index only.
  zones.push({ target: './src/report', from: './src/cli', message: 'src/report does not import the CLI.' });
  for (const top of ['cli', 'report']) {
    for (const system of SYSTEMS) {
      zones.push({
        target: `./src/${top}`,
        from: `./src/${system}`,
        except: ['./index.ts'],
        message: `src/${top} imports the ${system} system through src/${system}/index.ts only.`,
      });
    }
  }
  // Inside src/longtail: each layer imports only from the layers below it, never a sibling.
  LONGTAIL_LAYERS.forEach((layer, level) => {
    const above = LONGTAIL_LAYERS.slice(level + 1).flat();
    for (const folder of layer) {
      const forbidden = [...layer.filter((f) => f !== folder), ...above];
      zones.push({
        target: `./src/longtail/${folder}`,
        from: [...forbidden.map((f) => `./src/longtail/${f}`), './src/longtail/index.ts'],
        message: `src/longtail/${folder} imports only from the layers below it (${LONGTAIL_LAYERS.slice(0, level).flat().join(', ') || 'none'}); see src/longtail/index.ts.`,
      });
    }
  });
  return zones;
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'native/build/**',
      'web/vendor/**',
      'runs/**',
      '.tmp/**',
      '.gpu/**',
      'src/torch/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Sources import './x.js' for './x.ts' (NodeNext); the rules need the real file.
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones() }],
      // An import the resolver cannot follow would escape the rule above; none may.
      'import-x/no-unresolved': 'error',
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.type!="Literal"]',
          message:
            'import() with a computed path hides a dependency from the layer rules; import statically.',
        },
      ],
    },
  },
  {
    // Files of one layer may import each other, but not in a circle (src/torch's generated ops
    // and its Tensor class are one unit by design).
    files: [
      'src/longtail/**/*.ts',
      'src/mixture/**/*.ts',
      'src/nmr/**/*.ts',
      'src/cli/**/*.ts',
      'src/report/**/*.ts',
    ],
    rules: { 'import-x/no-cycle': 'error' },
  },
);
