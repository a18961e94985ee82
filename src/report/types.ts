// Shapes the report renderers read and the chart specs they hand to the page's client code
// (web/report.js draws them).

/** PRL controllability: accuracies over a grid of preferences on the simplex. */
export type ControllabilityGrid = {
  experts: number;
  points: {
    preference: number[];
    many: number | null;
    medium: number | null;
    few: number | null;
    top1: number | null;
    distributions: Record<string, number | null>;
  }[];
};

/** What the preference endpoint answers (and what evaluatePreference resolves to). */
export interface PreferenceAnswer {
  many: number | null;
  medium: number | null;
  few: number | null;
  top1: number | null;
  distributions: Record<string, number | null>;
}

export interface LineSeries {
  label: string;
  values: (number | null)[];
  axis?: 'y' | 'y2';
  dash?: boolean;
  points?: boolean;
  color?: string;
}

export interface LinesChart {
  type: 'lines';
  x: number[];
  xLabel: string;
  yLabel: string;
  y2Label?: string;
  series: LineSeries[];
  xTicks?: string[];
  logX?: boolean;
  logY?: boolean;
  yRange?: [number, number];
  y2Range?: [number, number];
  zoom?: boolean;
  /** Draw x decreasing to the right (NMR ppm). */
  reverseX?: boolean;
  /** Ticks at whole numbers only (epochs, K, levels). */
  integerX?: boolean;
  height?: number;
}

export interface Ellipse {
  cx: number;
  cy: number;
  rx: number;
  ry: number;
  /** Rotation of the rx axis from the x axis, radians. */
  angle: number;
  color?: string;
  label?: string;
}

export interface ScatterChart {
  type: 'scatter';
  xLabel: string;
  yLabel: string;
  series: { label: string; x: number[]; y: number[]; color?: string }[];
  /** Names of the whole-number x positions (categories such as ablation variants). */
  xTicks?: string[];
  ellipses?: Ellipse[];
  logX?: boolean;
  yRange?: [number, number];
  pointSize?: number;
  height?: number;
}

export interface HeatmapChart {
  type: 'heatmap';
  matrix: number[][];
  rows: string[];
  cols: string[];
  xLabel: string;
  yLabel: string;
  normalizeRows?: boolean;
}

export interface TernaryChart {
  type: 'ternary';
  corners: [string, string, string];
  metrics: string[];
  points: { preference: number[]; values: Record<string, number | null> }[];
}

export type ChartSpec = LinesChart | ScatterChart | HeatmapChart | TernaryChart;

/** A rendered report: title, HTML sections, and the chart specs the sections refer to. */
export interface ReportPage {
  title: string;
  kind: string;
  subtitle?: string;
  sections: string[];
  charts: Record<string, ChartSpec>;
  /** Set by `tailor serve` for PRL runs: the preference endpoint of this run. */
  live?: { endpoint: string };
}

export type RunKind =
  | 'longtail'
  | 'gmm'
  | 'gmm-select'
  | 'subgroup'
  | 'subgroup-select'
  | 'nmr'
  | 'nmr-yardstick'
  | 'nmr-train'
  | 'nmr-ablation';
