/**
 * The one table layout (src/views/table.ts) the command line and /delegates share: widths from the
 * widest cell within a column's max, padding (right-aligned numbers, a ragged last column on request)
 * and, fitted to a terminal, what gives way in which order.
 */
import { describe, expect, it } from "vitest";
import { displayWidth } from "../../src/core/display-width.ts";
import { type TableColumn, type TableText, tableCells, tableWidths } from "../../src/views/table.ts";

const TEXT: TableText = {
  width: displayWidth,
  cut: (text, columns) => {
    let out = "";
    for (const ch of text) {
      if (displayWidth(`${out}${ch}…`) > columns) break;
      out += ch;
    }
    return `${out}…`;
  },
};

const COLUMNS: TableColumn[] = [
  { title: "ID" },
  { title: "ROUTE", max: 10 },
  { title: "COST", right: true },
  { title: "NAME" },
];
const ROWS = [
  ["d1", "anthropic/claude-sonnet", "$0.0100", "a short name"],
  ["d22", "x/y", "$12.00", "認証監査チームの長い名前"],
];

describe("the one table layout", () => {
  it("sizes each column to its widest cell (terminal columns), within its max", () => {
    expect(tableWidths(COLUMNS, ROWS, TEXT)).toEqual([3, 10, 7, 24]);
  });

  it("pads cells, numbers on the left; the last one only when asked; cuts a cell wider than its column", () => {
    const widths = tableWidths(COLUMNS, ROWS, TEXT);
    expect(tableCells(COLUMNS, ROWS[1]!, widths, TEXT, false)).toEqual([
      "d22",
      "x/y       ",
      " $12.00",
      "認証監査チームの長い名前",
    ]);
    expect(tableCells(COLUMNS, ROWS[0]!, widths, TEXT, true)).toEqual([
      "d1 ",
      "anthropic…",
      "$0.0100",
      `a short name${" ".repeat(12)}`,
    ]);
  });

  it("fitted to a width, the columns give way in order, then the last column down to its floor", () => {
    const fitted = (total: number) =>
      tableWidths(COLUMNS, ROWS, TEXT, {
        total,
        shrink: [
          ["ROUTE", 6, 16],
          ["COST", 5, 8],
        ],
        room: 16,
        floor: 8,
      });
    // Room for all: the last column takes what is left.
    expect(fitted(60)).toEqual([3, 10, 7, 34]);
    // The route gives way first (to 6), keeping the name 16 columns.
    expect(fitted(36)).toEqual([3, 6, 7, 14]);
    // Then the cost, for a name of 8; then the name is cut to its floor.
    expect(fitted(26)).toEqual([3, 6, 5, 8]);
  });
});
