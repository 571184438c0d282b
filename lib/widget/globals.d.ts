declare const __WIDGET_VERSION__: string;
