export { Module } from './module.js';
export * from './layers.js';
export * from './activation.js';
export * as init from './init.js';
export * as functional from './functional.js';
